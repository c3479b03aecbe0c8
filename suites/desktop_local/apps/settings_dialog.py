"""A small settings dialog (Tk) for guitest's local desktop tasks: it writes its state to a JSON file on Save.

Usage: python settings_dialog.py STATE_FILE

Widgets sit at fixed pixel positions (``place``), so a task's scripted solution can click them
whatever the fonts: display name (entry), dark mode (check box), font size (spin box, 8..32),
updates (radio buttons daily / weekly / never), language (drop-down), Save and Cancel buttons.
Save writes ``{display_name, dark_mode, font_size, updates, language}`` and says "Saved"; Return
does the same; Cancel and Escape close the window without writing. Nothing is written at start.
"""

import json
import sys
import tkinter as tk

LANGUAGES = ("English", "Deutsch", "Francais", "Espanol")


def main() -> int:
    state_file = sys.argv[1]
    root = tk.Tk()
    root.title("guitest Settings")
    root.geometry("480x400+100+100")
    root.resizable(False, False)
    name = tk.StringVar(value="")
    dark = tk.BooleanVar(value=False)
    size = tk.IntVar(value=11)
    updates = tk.StringVar(value="daily")
    language = tk.StringVar(value=LANGUAGES[0])
    status = tk.StringVar(value="")

    def save(*_: object) -> None:
        try:
            font_size = int(size.get())
        except (tk.TclError, ValueError):
            status.set("Font size must be a number")
            return
        if not 8 <= font_size <= 32:
            status.set("Font size must be between 8 and 32")
            return
        with open(state_file, "w", encoding="utf-8") as f:
            json.dump({"display_name": name.get(), "dark_mode": bool(dark.get()), "font_size": font_size,
                       "updates": updates.get(), "language": language.get()}, f)
        status.set("Saved")

    tk.Label(root, text="Display name", anchor="w").place(x=20, y=20, width=140, height=28)
    entry = tk.Entry(root, textvariable=name)
    entry.place(x=170, y=20, width=280, height=28)
    tk.Checkbutton(root, text="Dark mode", variable=dark, anchor="w").place(x=20, y=70, width=200, height=28)
    tk.Label(root, text="Font size", anchor="w").place(x=20, y=120, width=140, height=28)
    tk.Spinbox(root, from_=8, to=32, textvariable=size, width=5).place(x=170, y=120, width=80, height=28)
    tk.Label(root, text="Updates", anchor="w").place(x=20, y=170, width=140, height=28)
    for i, value in enumerate(("daily", "weekly", "never")):
        tk.Radiobutton(root, text=value.capitalize(), variable=updates, value=value, anchor="w").place(x=170 + i * 95, y=170, width=90, height=28)
    tk.Label(root, text="Language", anchor="w").place(x=20, y=220, width=140, height=28)
    tk.OptionMenu(root, language, *LANGUAGES).place(x=170, y=220, width=160, height=30)
    tk.Label(root, textvariable=status, anchor="w").place(x=20, y=280, width=440, height=28)
    tk.Button(root, text="Save", command=save).place(x=260, y=340, width=90, height=34)
    tk.Button(root, text="Cancel", command=root.destroy).place(x=360, y=340, width=90, height=34)
    root.bind("<Return>", save)
    root.bind("<Escape>", lambda _e: root.destroy())
    entry.focus_set()
    root.mainloop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
