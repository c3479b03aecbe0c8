"""Scripted MiniWoB++ solutions for the ``oracle`` baseline: per task, a JavaScript function of the page.

Each solution reads the visible page (the utterance, the elements, their state) and returns the NEXT
action only, as a real agent must take it: ``{kind: 'click', x, y}`` at a point (CSS pixels of the
page, a point of the element that is not covered by another), ``{kind: 'type', text}``,
``{kind: 'key', keys: [...]}``, ``{kind: 'done'}`` or ``{kind: 'fail', text}``. The policy turns it into
screenshot pixels and a reply in the model's convention, so the whole path (reply, parser, mapping,
browser) is exercised. Solutions never call the task's own handlers or read its hidden answer.

:data:`SOLVED` lists the tasks; over the suite's seeds each reaches success 1.0 under the default success
rule (tests/test_live_browser.py checks a few, bench/bench_live.py all of them). On the five continuous
tasks (guitest/miniwob/rules.py) its answers are the best the page's whole pixels and jscolor's field
allow: raw 0.97-0.98 on circle-center, 0.98-1 on find-midpoint, 0.998 or more on bisect-angle over the
suite's seeds, and 1 on use-colorwheel and use-colorwheel-2 (the colour typed into the picker's field).
"""

from __future__ import annotations

from typing import Any, Mapping

from ..errors import ModelError
from ..live.actions import CLICK, DONE, FAIL, KEY, TYPE, Action
from ..live.loop import StepInput
from ..live.protocol import TaskSpec

PRELUDE = r"""
const U = core.getUtterance();
const one = s => document.querySelector(s);
const all = s => Array.from(document.querySelectorAll(s));
const shown = el => !!el && el.getClientRects().length > 0 && Array.from(el.getClientRects()).some(r => r.width > 0 && r.height > 0) && getComputedStyle(el).visibility !== 'hidden';
const point = el => {
  const rects = Array.from(el.getClientRects()).filter(r => r.width > 0 && r.height > 0);
  for (const r of rects) {
    for (const [fx, fy] of [[0.5, 0.5], [0.25, 0.5], [0.75, 0.5], [0.5, 0.25], [0.5, 0.75], [0.15, 0.15], [0.85, 0.85], [0.15, 0.85], [0.85, 0.15]]) {
      const x = r.left + r.width * fx, y = r.top + r.height * fy;
      const hit = document.elementFromPoint(x, y);
      if (hit && (hit === el || el.contains(hit))) return {x, y};
    }
  }
  const r = rects[0] || el.getBoundingClientRect();
  return {x: r.left + r.width / 2, y: r.top + r.height / 2};
};
const click = el => el ? Object.assign({kind: 'click'}, point(el)) : {kind: 'fail', text: 'no element to click'};
const quoted = () => { const m = U.match(/"([^"]*)"/); return m ? m[1] : null; };
const allQuoted = () => Array.from(U.matchAll(/"([^"]*)"/g)).map(m => m[1]);
const bold = () => { const b = one('#query .bold'); return b ? b.textContent : null; };
const byText = (selector, text) => all(selector).find(e => e.textContent.trim() === text);
const fill = (el, text) => {
  if (!el) return {kind: 'fail', text: 'no field to fill'};
  if (el.value === text) return null;
  if (document.activeElement !== el) return click(el);
  if (el.value !== '' && !(el.selectionStart === 0 && el.selectionEnd === el.value.length)) return {kind: 'key', keys: ['ctrl', 'a']};
  return {kind: 'type', text: text};
};
const first = (...steps) => { for (const s of steps) { const a = typeof s === 'function' ? s() : s; if (a) return a; } return {kind: 'done'}; };
const checkboxes = (names) => {
  for (const label of all('#area label')) {
    const input = label.querySelector('input');
    if (input && input.checked !== names.includes(label.textContent.trim())) return click(input);
  }
  return null;
};
const selectNames = () => { const m = U.match(/^Select (.*) and click Submit\.$/); return !m || m[1] === 'nothing' ? [] : m[1].split(', '); };
const revealThenClick = (target, container, opener) => {
  if (!target) return {kind: 'fail', text: 'no target'};
  if (shown(target)) return click(target);
  return click(opener(target.closest(container)));
};
const covered = el => { const r = el.getBoundingClientRect(); const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2); return !(hit && (hit === el || el.contains(hit))); };
// The geometry tasks draw (and score) their blue dot at the click's page coordinates read as svg coordinates less
// the 50 px query, (pageX, pageY - 50): 2 px right of and below the pointer, as they ignore #area's padding. The
// oracle puts the dot on the answer, as an agent watching where its dot lands would: it clicks the middle of the
// CSS pixel (x, y + 50) (Chromium floors the pointer's page coordinates), then submits once the dot is there.
const centre = el => [Number(el.getAttribute('cx')), Number(el.getAttribute('cy'))];
const placeDot = ([x, y]) => {
  const dot = one('#blue-circle');
  if (dot && centre(dot)[0] === x && centre(dot)[1] === y) return click(one('#subbtn'));
  return {kind: 'click', x: x + 0.5, y: y + 50.5};
};
// The whole-pixel dot whose ray from the vertex is closest in angle to the bisector of the drawn angle (farther
// from the vertex on a tie), among the dots a click on the svg gives (not one on the Submit button over its foot).
const bisectingDot = (v, a, b) => {
  const svg = one('#area svg');
  const onSvg = (x, y) => { const hit = document.elementFromPoint(x + 0.5, y + 50.5); return !!hit && (hit === svg || svg.contains(hit)); };
  const unit = ([x, y]) => { const n = Math.hypot(x, y); return [x / n, y / n]; };
  const ua = unit([a[0] - v[0], a[1] - v[1]]), ub = unit([b[0] - v[0], b[1] - v[1]]);
  let dir = [ua[0] + ub[0], ua[1] + ub[1]];
  dir = Math.hypot(dir[0], dir[1]) < 1e-9 ? [-ua[1], ua[0]] : unit(dir);
  let best = null, bestCos = -2, bestLength = 0;
  for (let x = 2; x <= 151; x++) for (let y = 2; y <= 131; y++) {
    const dx = x - v[0], dy = y - v[1], length = Math.hypot(dx, dy);
    if (length < 1) continue;
    const cos = (dx * dir[0] + dy * dir[1]) / length;
    if ((cos > bestCos + 1e-12 || (cos > bestCos - 1e-12 && length > bestLength)) && onSvg(x, y)) { best = [x, y]; bestCos = cos; bestLength = length; }
  }
  return best;
};
// A CSS colour (a name, rgb(...)) as the hex digits jscolor's field holds, lower case.
const hexOf = colour => { const c = document.createElement('canvas').getContext('2d'); c.fillStyle = '#000'; c.fillStyle = colour; return c.fillStyle.slice(1).toLowerCase(); };
// Type the colour into jscolor's field (its picker opens over Submit: a click on the instruction closes it), then submit.
const pickColour = hex => {
  const field = one('#col');
  return first(
    () => (field.value.toLowerCase() === hex ? null : fill(field, hex)),
    () => (covered(one('#subbtn')) ? click(one('#query')) : null),
    () => click(one('#subbtn')));
};
"""

#: task name -> body of ``(step) => { ... }`` returning the next action (``step``: the step index, from 0)
SOLUTIONS: dict[str, str] = {
    "click-button": "return click(byText('#area button', quoted()));",
    "unicode-test": "return click(byText('#area button', quoted()));",
    "click-button-sequence": "return click(one(step === 0 ? '#subbtn' : '#subbtn2'));",
    "click-test": "return click(one('#subbtn'));",
    "click-test-2": "return click(one('#subbtn'));",
    "click-test-transfer": "return click(one(U.includes('TWO') ? '#subbtn2' : '#subbtn'));",
    "click-link": "return click(byText('#area .alink', quoted()));",
    "click-checkboxes": "return first(() => checkboxes(selectNames()), () => click(one('#subbtn')));",
    "click-checkboxes-large": "return first(() => checkboxes(selectNames()), () => click(one('#subbtn')));",
    "click-checkboxes-transfer": "return first(() => checkboxes(selectNames()), () => click(one('#subbtn')));",
    "click-option": """
      const name = selectNames()[0];
      const label = all('#area label').find(l => l.textContent.trim() === name);
      const input = label && label.querySelector('input');
      return first(() => (input && !input.checked ? click(input) : null), () => click(one('#subbtn')));""",
    "click-collapsible": """
      const open = all('#area .ui-accordion-content').some(shown);
      return click(open ? one('#subbtn') : one('#area h3'));""",
    "click-collapsible-2": """
      const target = all('#area .alink').find(e => e.textContent === quoted());
      return revealThenClick(target, '.ui-accordion-content', panel => panel.previousElementSibling);""",
    "click-tab": "return click(byText('#area ul a', U.match(/Tab #\\d/)[0]));",
    "click-tab-2": """
      const target = all('#area .alink').find(e => e.textContent === quoted() && shown(e)) || all('#area .alink').find(e => e.textContent === quoted());
      return revealThenClick(target, '.ui-tabs-panel', panel => one('#area ul a[href="#' + panel.id + '"]'));""",
    "click-dialog": "return click(one('.ui-dialog-titlebar-close'));",
    "click-dialog-2": """
      const want = quoted();
      return click(want === 'x' ? one('.ui-dialog-titlebar-close') : byText('.ui-dialog-buttonpane button', want));""",
    "click-widget": "return click(all('#area [data-type]').find(e => e.dataset.type === quoted()));",
    "enter-text": "return first(() => fill(one('#tt'), bold()), () => click(one('#subbtn')));",
    "enter-text-dynamic": "return first(() => fill(one('#tt'), bold()), () => click(one('#subbtn')));",
    "enter-text-2": """
      const text = U.includes('upper case') ? bold().toUpperCase() : bold().toLowerCase();
      return first(() => fill(one('#tt'), text), () => click(one('#subbtn')));""",
    "enter-password": "return first(() => fill(one('#password'), bold()), () => fill(one('#verify'), bold()), () => click(one('#subbtn')));",
    "login-user": """
      const [user, password] = allQuoted();
      return first(() => fill(one('#username'), user), () => fill(one('#password'), password), () => click(one('#subbtn')));""",
    "focus-text": "return click(one('#tt'));",
    "focus-text-2": "return click(one('#tt' + (['1st', '2nd', '3rd'].findIndex(p => U.includes(p)) + 1)));",
    "grid-coordinate": "return click(document.getElementById(bold()));",
    "simple-arithmetic": """
      const [a, op, b] = one('#math-problem').textContent.trim().split(/\\s+/);
      const x = Number(a), y = Number(b);
      const answer = String(op === '+' ? x + y : op === '-' ? x - y : x * y);
      return first(() => fill(one('#math-answer'), answer), () => click(one('#subbtn')));""",
    "circle-center": "return placeDot(centre(one('#area .black-circle')));",
    "find-midpoint": """
      const [a, b] = all('#area .black-circle').map(centre);
      return placeDot([Math.round((a[0] + b[0]) / 2), Math.round((a[1] + b[1]) / 2)]);""",
    "bisect-angle": """
      const [a, b] = all('#area .init-black').map(centre);
      return placeDot(bisectingDot(centre(one('#area .init-blue')), a, b));""",
    "use-colorwheel": "return pickColour(hexOf(U.match(/^Select (.*) with the color picker/)[1]));",
    "use-colorwheel-2": "return pickColour(hexOf(getComputedStyle(one('#query .cc')).backgroundColor));",
    "use-autocomplete": """
      const parts = all('#query .bold').map(b => b.textContent);
      const item = ui_utils.COUNTRIES.find(c => c.startsWith(parts[0]) && (parts.length < 2 || c.endsWith(parts[1])));
      return first(() => fill(one('#tags'), item), () => click(one('#subbtn')));""",
}

SOLVED = tuple(sorted(SOLUTIONS))


def script(task: str) -> str | None:
    """The JavaScript function (``step => action``) solving MiniWoB++ ``task``, or None when there is none."""
    body = SOLUTIONS.get(task)
    if body is None:
        return None
    return f"(step) => {{ {PRELUDE}\n{body}\n}}"


class MiniwobOracle:
    """MiniWoB++'s oracle (:mod:`guitest.live.oracles`): the task's solution run in the page, its next action said
    through the model's runner."""

    spoken = True

    def reason(self, task: TaskSpec, data: Mapping[str, Any]) -> str | None:
        if task.name in SOLVED:
            return None
        return f"no scripted solution for MiniWoB++ task {task.name!r} (the oracle solves {len(SOLVED)} tasks: see guitest/miniwob/oracle.py)"

    def next_action(self, env: Any, step: StepInput, data: Mapping[str, Any]) -> Action:
        if not callable(getattr(env, "run_js", None)):
            raise ModelError(f"the oracle reads the page through the environment's run_js, which {type(env).__name__} lacks")
        raw = env.run_js(script(step.task.name), step.step)
        scale = step.observation.scale
        if not isinstance(raw, dict) or raw.get("kind") not in ("click", "type", "key", "done", "fail"):
            return Action(FAIL, text=f"the scripted solution gave {raw!r}")
        kind = raw["kind"]
        if kind == "click":
            return Action(CLICK, point=(float(raw["x"]) * scale, float(raw["y"]) * scale), space="screen")
        if kind == "type":
            return Action(TYPE, text=str(raw["text"]))
        if kind == "key":
            return Action(KEY, keys=tuple(str(k) for k in raw["keys"]))
        return Action(DONE if kind == "done" else FAIL, text=str(raw.get("text", "")))


ORACLE = MiniwobOracle()
