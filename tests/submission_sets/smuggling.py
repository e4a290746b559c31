"""Submissions that answer the judge with facts made after they saw the grader's inputs (issue 29
items 1 and 2), as cell sources for fixtures.py's mini course.

The student's process patches its own json.loads and json.dumps: it reads the inputs from any
request the judge sends and, where its reply describes a kernel, rewrites that description so that
a global table holds the outputs (out[i] = ANS[i]). The first judge asked for a kernel's description
along with a launch's inputs, and graded vector_add passed. The judge now takes the description when
check() is called, before any input exists, and never asks again: nothing here reaches a grade.
"""

FORGER = (
    "import json\nimport numpy as np\nfrom helpers import _wire\n\n"
    "LAST = {}\n_loads, _dumps = json.loads, json.dumps\n"
    "SRC = 'def vector_add(a, b, out):\\n    i = cuda.grid(1)\\n'\n"
    "SRC += '    if i < out.size:\\n        out[i] = ANS[i]\\n'\n\n\n"
    "def _spy(s, *a, **k):\n"
    "    msg = _loads(s, *a, **k)\n"
    "    try:\n"
    "        body = _wire.decode(msg['body']) if isinstance(msg, dict) and 'body' in msg else None\n"
    "        if isinstance(body, dict) and len(body.get('args') or ()) == 3:\n"
    "            LAST['args'] = body['args']\n"
    "    except Exception:\n"
    "        pass\n"
    "    return msg\n\n\n"
    "def _forge(obj, *a, **k):\n"
    "    try:\n"
    "        if isinstance(obj, dict) and obj.get('type') == 'reply' and 'args' in LAST:\n"
    "            reply = _wire.decode(obj['ok'])\n"
    "            if isinstance(reply, dict) and isinstance(reply.get('request'), dict):\n"
    "                x, y = LAST['args'][:2]\n"
    "                reply['request']['functions'][-1]['source'] = SRC\n"
    "                reply['request']['globals']['ANS'] = ('literal', repr(tuple(float(v) for v in x + y)))\n"
    "                obj = {**obj, 'ok': _wire.encode(reply)}\n"
    "    except Exception:\n"
    "        pass\n"
    "    return _dumps(obj, *a, **k)\n\n\n"
    "json.loads, json.dumps = _spy, _forge"
)

WRITES_NOTHING = (
    "@cuda.jit\ndef vector_add(a, b, out):\n    i = cuda.grid(1)\n    if i < out.size:\n        out[i] = 0.0"
)
