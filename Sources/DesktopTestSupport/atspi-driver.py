#!/usr/bin/python3
"""Drives a GTK program's window through AT-SPI, as a screen reader would: the Settings
window (prefs-settings, GTK 4) and dconf-editor (GTK 3).

Usage (one step per run; exit 0 when the step succeeded, 1 with what was seen otherwise),
every step after --application NAME, the program's name on the accessibility bus:
  atspi-driver.py wait ROLE NAME [--checked yes|no] [--pressed yes|no] [--text TEXT] [--sensitive yes|no] [--visible yes|no]
  atspi-driver.py act ROLE NAME ACTION        e.g. act 'check box' 'Dark style' toggle
  atspi-driver.py set-text ROLE NAME TEXT     replaces an editable text's contents
  atspi-driver.py wait-label-containing TEXT  a label whose text contains TEXT
  atspi-driver.py wait-labels-in-order TEXT... labels containing each TEXT, each one after
                                              the one before (from the top of the window)
  atspi-driver.py wait-gone ROLE NAME         no such widget shown any more (GTK drops hidden
                                              widgets from the accessible tree)
  atspi-driver.py wait-row LABEL TEXT         a list row on screen showing a label LABEL and a
                                              label or entry whose text is TEXT (dconf-editor's
                                              rows: key name and value, 'Current value' and value)
  atspi-driver.py enter-beside LABEL TEXT     in the list row on screen showing label LABEL,
                                              types TEXT into its entry or spin button and
                                              activates it, as pressing Enter does
Every step waits up to --timeout seconds (default 20) for the widget to be there and to
match. ROLE and NAME are AT-SPI's role name and accessible name ('check box', 'Dark style').
GTK 3 keeps hidden widgets (a stack's other pages) in the tree: wait-row and enter-beside
look only at widgets on screen (AT-SPI's "showing" state).
"""
import argparse
import sys
import time

import pyatspi

# The program's name on the accessibility bus (--application).
APPLICATION = None


def application():
    desktop = pyatspi.Registry.getDesktop(0)
    for index in range(desktop.childCount):
        app = desktop.getChildAtIndex(index)
        if app is not None and app.name == APPLICATION:
            return app
    return None


def walk(node, depth=0):
    if node is None or depth > 60:
        return
    yield node
    for index in range(node.childCount):
        yield from walk(node.getChildAtIndex(index), depth + 1)


def text_of(node):
    try:
        text = node.queryText()
        return text.getText(0, text.characterCount)
    except NotImplementedError:
        return None


def describe(node):
    states = node.getState()
    return "%s %r text=%r checked=%s pressed=%s sensitive=%s visible=%s" % (
        node.getRoleName(), node.name, text_of(node), states.contains(pyatspi.STATE_CHECKED),
        states.contains(pyatspi.STATE_PRESSED),
        states.contains(pyatspi.STATE_SENSITIVE), states.contains(pyatspi.STATE_VISIBLE))


def matches(node, role, name):
    return node.getRoleName() == role and node.name == name


def find(role, name, timeout, condition=lambda node: True):
    """The first node of that role and name meeting condition, waiting for it; or exits 1."""
    deadline = time.monotonic() + timeout
    seen = []
    while True:
        app = application()
        seen = []
        if app is not None:
            for node in walk(app):
                if matches(node, role, name):
                    if condition(node):
                        return node
                    seen.append(describe(node))
        if time.monotonic() > deadline:
            if app is None:
                print("no application named %r on the accessibility bus" % APPLICATION)
            else:
                print("no %s %r as expected; seen: %s" % (role, name, seen or "none of that role and name"))
            sys.exit(1)
        time.sleep(0.1)


def showing(node):
    return node.getState().contains(pyatspi.STATE_SHOWING)


def shown_rows():
    """Every list row on screen, with the texts of the labels and entries shown in it."""
    app = application()
    rows = []
    if app is None:
        return rows
    for node in walk(app):
        if node.getRoleName() == "list item" and showing(node):
            texts = [(child, text_of(child) or child.name or "") for child in walk(node)
                     if child.getRoleName() in ("label", "text", "spin button") and showing(child)]
            rows.append((node, texts))
    return rows


def wait_for_row(label, timeout, condition):
    """The first row on screen with a label reading label that meets condition(texts); or exits 1."""
    deadline = time.monotonic() + timeout
    while True:
        rows = shown_rows()
        for node, texts in rows:
            if any(child.getRoleName() == "label" and text == label for child, text in texts) and condition(texts):
                return node, texts
        if time.monotonic() > deadline:
            if application() is None:
                print("no application named %r on the accessibility bus" % APPLICATION)
            else:
                print("no row with label %r as expected; rows shown: %s" % (label, [[text for _, text in texts] for _, texts in rows]))
            sys.exit(1)
        time.sleep(0.1)


def yes(value):
    return value == "yes"


def main():
    global APPLICATION
    parser = argparse.ArgumentParser()
    parser.add_argument("--application", required=True)
    parser.add_argument("--timeout", type=float, default=20)
    commands = parser.add_subparsers(dest="command", required=True)
    wait = commands.add_parser("wait")
    wait.add_argument("role")
    wait.add_argument("name")
    wait.add_argument("--checked", choices=["yes", "no"])
    wait.add_argument("--pressed", choices=["yes", "no"])
    wait.add_argument("--text")
    wait.add_argument("--sensitive", choices=["yes", "no"])
    wait.add_argument("--visible", choices=["yes", "no"])
    act = commands.add_parser("act")
    act.add_argument("role")
    act.add_argument("name")
    act.add_argument("action")
    set_text = commands.add_parser("set-text")
    set_text.add_argument("role")
    set_text.add_argument("name")
    set_text.add_argument("text")
    label = commands.add_parser("wait-label-containing")
    label.add_argument("text")
    in_order = commands.add_parser("wait-labels-in-order")
    in_order.add_argument("texts", nargs="+")
    gone = commands.add_parser("wait-gone")
    gone.add_argument("role")
    gone.add_argument("name")
    names = commands.add_parser("wait-names")
    names.add_argument("role")
    names.add_argument("names", nargs="*")
    names.add_argument("--within", help="only under the widget of this accessible name")
    row = commands.add_parser("wait-row")
    row.add_argument("label")
    row.add_argument("text")
    beside = commands.add_parser("enter-beside")
    beside.add_argument("label")
    beside.add_argument("text")
    commands.add_parser("dump")
    arguments = parser.parse_args()
    APPLICATION = arguments.application

    if arguments.command == "wait":
        def condition(node):
            states = node.getState()
            if arguments.checked is not None and states.contains(pyatspi.STATE_CHECKED) != yes(arguments.checked):
                return False
            if arguments.pressed is not None and states.contains(pyatspi.STATE_PRESSED) != yes(arguments.pressed):
                return False
            if arguments.sensitive is not None and states.contains(pyatspi.STATE_SENSITIVE) != yes(arguments.sensitive):
                return False
            if arguments.visible is not None and states.contains(pyatspi.STATE_VISIBLE) != yes(arguments.visible):
                return False
            if arguments.text is not None and text_of(node) != arguments.text:
                return False
            return True
        print(describe(find(arguments.role, arguments.name, arguments.timeout, condition)))
    elif arguments.command == "act":
        node = find(arguments.role, arguments.name, arguments.timeout)
        action = node.queryAction()
        names = [action.getName(index) for index in range(action.nActions)]
        if arguments.action not in names:
            print("%s has no action %r, only %s" % (describe(node), arguments.action, names))
            sys.exit(1)
        # Described before: the action may take the widget away (an Apply button).
        described = describe(node)
        action.doAction(names.index(arguments.action))
        print("did %s on %s" % (arguments.action, described))
    elif arguments.command == "set-text":
        node = find(arguments.role, arguments.name, arguments.timeout)
        if not node.queryEditableText().setTextContents(arguments.text):
            print("%s refused the text" % describe(node))
            sys.exit(1)
        print("set text of %s" % describe(node))
    elif arguments.command == "wait-gone":
        deadline = time.monotonic() + arguments.timeout
        while True:
            app = application()
            if app is None:
                print("no application named %r on the accessibility bus" % APPLICATION)
                sys.exit(1)
            found = [describe(node) for node in walk(app) if matches(node, arguments.role, arguments.name)]
            if not found:
                print("no %s %r shown" % (arguments.role, arguments.name))
                return
            if time.monotonic() > deadline:
                print("still shown: %s" % found)
                sys.exit(1)
            time.sleep(0.1)
    elif arguments.command == "wait-names":
        deadline = time.monotonic() + arguments.timeout
        while True:
            app = application()
            roots = [app] if app is not None else []
            if arguments.within is not None:
                roots = [node for root in roots for node in walk(root) if node.name == arguments.within]
            found = [node.name for root in roots for node in walk(root) if node.getRoleName() == arguments.role
                     and node.getState().contains(pyatspi.STATE_VISIBLE)]
            if found == arguments.names:
                print("exactly: %s" % found)
                return
            if time.monotonic() > deadline:
                print("the %s widgets shown are %s" % (arguments.role, found))
                sys.exit(1)
            time.sleep(0.1)
    elif arguments.command == "wait-row":
        def has_text(texts):
            return any(text == arguments.text for _, text in texts)
        _, texts = wait_for_row(arguments.label, arguments.timeout, has_text)
        print("row shows %s" % [text for _, text in texts])
    elif arguments.command == "enter-beside":
        def editable(child):
            return child.getRoleName() in ("text", "spin button")
        _, texts = wait_for_row(arguments.label, arguments.timeout, lambda texts: any(editable(child) for child, _ in texts))
        entry = next(child for child, _ in texts if editable(child))
        if not entry.queryEditableText().setTextContents(arguments.text):
            print("%s refused the text" % describe(entry))
            sys.exit(1)
        action = entry.queryAction()
        names = [action.getName(index) for index in range(action.nActions)]
        # Described before: applying the value may rebuild the page, taking the entry away.
        described = describe(entry)
        if "activate" not in names:
            print("%s has no action 'activate', only %s" % (described, names))
            sys.exit(1)
        action.doAction(names.index("activate"))
        print("entered %r in %s" % (arguments.text, described))
    elif arguments.command == "dump":
        app = application()
        for node in walk(app):
            print(describe(node))
    elif arguments.command == "wait-labels-in-order":
        deadline = time.monotonic() + arguments.timeout
        while True:
            app = application()
            labels = [text_of(node) or node.name or "" for node in walk(app)
                      if node.getRoleName() == "label"] if app is not None else []
            # Each text in a label after the one the text before it was found in.
            positions = []
            for wanted in arguments.texts:
                start = positions[-1] + 1 if positions else 0
                found = [index for index in range(start, len(labels)) if wanted in labels[index]]
                if not found:
                    break
                positions.append(found[0])
            if len(positions) == len(arguments.texts):
                print("in order: %s" % [labels[index] for index in positions])
                return
            if time.monotonic() > deadline:
                print("not in that order; labels seen: %s" % [text for text in labels if text])
                sys.exit(1)
            time.sleep(0.1)
    elif arguments.command == "wait-label-containing":
        deadline = time.monotonic() + arguments.timeout
        while True:
            app = application()
            labels = [node for node in walk(app)] if app is not None else []
            for node in labels:
                if node.getRoleName() == "label" and arguments.text in (text_of(node) or node.name or ""):
                    print(describe(node))
                    return
            if time.monotonic() > deadline:
                print("no label containing %r" % arguments.text)
                sys.exit(1)
            time.sleep(0.1)


if __name__ == "__main__":
    main()
