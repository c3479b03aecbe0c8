"""A small notes window (Tk) whose "Save As..." button opens Tk's file dialog, for guitest's local desktop tasks.

Usage: python notes_app.py "TEXT OF THE NOTE"

The note is shown in a text box; "Save As..." (at a fixed position) asks for a file name in Tk's
own file dialog (starting in the home folder; a typed relative name is relative to it) and writes
the note there.
"""

import os
import sys
import tkinter as tk
from tkinter import filedialog


def main() -> int:
    root = tk.Tk()
    root.title("guitest Notes")
    root.geometry("480x320+100+100")
    text = tk.Text(root)
    text.insert("1.0", sys.argv[1] if len(sys.argv) > 1 else "")
    text.place(x=10, y=10, width=460, height=250)

    def save_as() -> None:
        path = filedialog.asksaveasfilename(parent=root, title="Save note as", initialdir=os.path.expanduser("~"))
        if path:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text.get("1.0", "end-1c"))
            root.title(f"guitest Notes - {os.path.basename(path)}")

    tk.Button(root, text="Save As...", command=save_as).place(x=370, y=274, width=100, height=34)
    root.mainloop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
