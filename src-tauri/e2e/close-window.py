#!/usr/bin/env python3
"""Ask an X11 top-level window to close, as a window manager's close button does: a
WM_PROTOCOLS / WM_DELETE_WINDOW client message. The e2e test runs under Xvfb without a window
manager, where nothing else would send it. Prints the ids of the windows it asked.

usage: close-window.py TITLE
"""
import ctypes
import ctypes.util
import sys

x11 = ctypes.cdll.LoadLibrary(ctypes.util.find_library("X11") or "libX11.so.6")
Window = ctypes.c_ulong
Atom = ctypes.c_ulong
x11.XOpenDisplay.restype = ctypes.c_void_p
x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
x11.XDefaultRootWindow.restype = Window
x11.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
x11.XQueryTree.argtypes = [
    ctypes.c_void_p,
    Window,
    ctypes.POINTER(Window),
    ctypes.POINTER(Window),
    ctypes.POINTER(ctypes.POINTER(Window)),
    ctypes.POINTER(ctypes.c_uint),
]
x11.XFetchName.argtypes = [ctypes.c_void_p, Window, ctypes.POINTER(ctypes.c_char_p)]
x11.XInternAtom.restype = Atom
x11.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
x11.XGetWMProtocols.argtypes = [
    ctypes.c_void_p,
    Window,
    ctypes.POINTER(ctypes.POINTER(Atom)),
    ctypes.POINTER(ctypes.c_int),
]
x11.XFree.argtypes = [ctypes.c_void_p]
x11.XSendEvent.argtypes = [ctypes.c_void_p, Window, ctypes.c_int, ctypes.c_long, ctypes.c_void_p]
x11.XFlush.argtypes = [ctypes.c_void_p]
x11.XCloseDisplay.argtypes = [ctypes.c_void_p]


class ClientMessage(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("serial", ctypes.c_ulong),
        ("send_event", ctypes.c_int),
        ("display", ctypes.c_void_p),
        ("window", Window),
        ("message_type", Atom),
        ("format", ctypes.c_int),
        ("data", ctypes.c_long * 5),
    ]


class XEvent(ctypes.Union):
    # Xlib's XEvent is a union padded to 24 longs.
    _fields_ = [("xclient", ClientMessage), ("pad", ctypes.c_long * 24)]


CLIENT_MESSAGE = 33


def children(dpy, win):
    root, parent = Window(), Window()
    kids = ctypes.POINTER(Window)()
    n = ctypes.c_uint()
    if not x11.XQueryTree(dpy, win, ctypes.byref(root), ctypes.byref(parent), ctypes.byref(kids), ctypes.byref(n)):
        return []
    out = [kids[i] for i in range(n.value)]
    if kids:
        x11.XFree(kids)
    return out


def title(dpy, win):
    name = ctypes.c_char_p()
    if x11.XFetchName(dpy, win, ctypes.byref(name)) and name.value is not None:
        return name.value.decode("utf-8", "replace")
    return None


def protocols(dpy, win):
    atoms = ctypes.POINTER(Atom)()
    n = ctypes.c_int()
    if not x11.XGetWMProtocols(dpy, win, ctypes.byref(atoms), ctypes.byref(n)):
        return []
    out = [atoms[i] for i in range(n.value)]
    x11.XFree(atoms)
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    want = sys.argv[1]
    dpy = x11.XOpenDisplay(None)
    if not dpy:
        sys.exit("close-window: cannot open the X display ($DISPLAY)")
    wm_protocols = x11.XInternAtom(dpy, b"WM_PROTOCOLS", 0)
    wm_delete = x11.XInternAtom(dpy, b"WM_DELETE_WINDOW", 0)
    asked = []
    for win in children(dpy, x11.XDefaultRootWindow(dpy)):
        if title(dpy, win) != want or wm_delete not in protocols(dpy, win):
            continue
        ev = XEvent()
        ev.xclient.type = CLIENT_MESSAGE
        ev.xclient.window = win
        ev.xclient.message_type = wm_protocols
        ev.xclient.format = 32
        ev.xclient.data[0] = wm_delete
        ev.xclient.data[1] = 0  # CurrentTime
        x11.XSendEvent(dpy, win, 0, 0, ctypes.byref(ev))
        asked.append(win)
    x11.XFlush(dpy)
    x11.XCloseDisplay(dpy)
    if not asked:
        sys.exit(f"close-window: no top-level window titled {want!r} takes WM_DELETE_WINDOW")
    print(" ".join(hex(w) for w in asked))


if __name__ == "__main__":
    main()
