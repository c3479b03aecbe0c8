"""Print the desktop's accessibility tree as OSWorld's XML, read through AT-SPI with pyatspi.

Run by the desktop server with the system Python (``/usr/bin/python3``, where Debian's python3-pyatspi
lives) as a plain script, so it imports nothing of guitest. The XML follows OSWorld's server: a
``desktop-frame`` root, one element per accessible named by its role, its ``name``, its states as
``st:<state>="true"``, its on-screen position and size as ``cp:screencoord`` / ``cp:size``, and its
text. Exit status 3 when pyatspi cannot be imported.
"""

import sys
import xml.etree.ElementTree as ET

NS = {
    "st": "https://accessibility.ubuntu.example.org/ns/state",
    "attr": "https://accessibility.ubuntu.example.org/ns/attributes",
    "cp": "https://accessibility.ubuntu.example.org/ns/component",
    "txt": "https://accessibility.ubuntu.example.org/ns/text",
}
MAX_DEPTH, MAX_WIDTH, MAX_NODES = 50, 1024, 5000


def main() -> int:
    try:
        import pyatspi
    except ImportError:
        print("python3-pyatspi is not installed for this Python", file=sys.stderr)
        return 3
    for prefix, uri in NS.items():
        ET.register_namespace(prefix, uri)
    count = [0]

    def node(acc, depth):
        count[0] += 1
        role = (acc.getRoleName() or "unknown").strip().replace(" ", "-") or "unknown"
        el = ET.Element(role, {"name": acc.name or ""})
        try:
            states = acc.getState().getStates()
        except Exception:
            states = []
        showing = False
        for st in states:
            name = pyatspi.stateToString(st).replace(" ", "-")
            el.set(f"{{{NS['st']}}}{name}", "true")
            showing = showing or name == "showing"
        try:
            for key, value in dict(a.split(":", 1) for a in acc.getAttributes() if ":" in a).items():
                el.set(f"{{{NS['attr']}}}{key}", value)
        except Exception:
            pass
        if showing:
            try:
                x, y, w, h = acc.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
                el.set(f"{{{NS['cp']}}}screencoord", f"({x}, {y})")
                el.set(f"{{{NS['cp']}}}size", f"({w}, {h})")
            except Exception:
                pass
        try:
            text = acc.queryText()
            el.text = text.getText(0, text.characterCount).replace("\ufffc", "").replace("\ufffd", "")
        except Exception:
            pass
        if depth < MAX_DEPTH:
            for index in range(min(acc.childCount, MAX_WIDTH)):
                if count[0] >= MAX_NODES:
                    break
                try:
                    child = acc.getChildAtIndex(index)
                except Exception:
                    continue
                if child is not None:
                    el.append(node(child, depth + 1))
        return el

    desktop = pyatspi.Registry.getDesktop(0)
    root = ET.Element("desktop-frame")
    for index in range(desktop.childCount):
        app = desktop.getChildAtIndex(index)
        if app is not None and count[0] < MAX_NODES:
            root.append(node(app, 1))
    sys.stdout.write(ET.tostring(root, encoding="unicode"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
