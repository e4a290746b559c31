"""The instructors' batch grader: ``python -m helpers.grade SUBMISSIONS --out DIR``.

A pipeline of small steps, each in its own module (docs/grading.md has the whole story):

- ``course``       which exercises each course notebook has, and which variable holds each answer,
                   parsed (with ``ast``) from the PRISTINE notebooks in ``notebooks/``
- ``submissions``  unpack a zip, discover one submission per student x notebook, read the cells
- ``child``        runs INSIDE the fresh per-submission process: execute the student's cells;
                   for a judged notebook answer the judge, else snapshot the trusted objects,
                   grade with the snapshot and stream signed results
- ``judge``        the grader's side of a judged notebook: the exercises, references and seeds
                   stay here; the checks run on stand-ins for the student's answers
- ``serve``        the student's side of a judged notebook: stand-in exercise modules, and the
                   operations (call, trace, launch, describe for the compiler, draw) run on plain inputs
- ``workers``      the judge's own NVRTC and tracer processes per submission: what decides a grade
                   never comes from the student's process, and their code never runs in the grader
- ``cells``        the child's tools for one cell: IPython syntax, timers, limits, signed lines, plain data
- ``execute``      the parent's side of one submission: start the child, timeouts, output caps,
                   crashes, a second run that skips a crashing cell
- ``sandbox``      each child in its own Linux namespaces (bubblewrap or unshare), or says why not
- ``review``       static review: code a course notebook rarely needs, flagged for a human
- ``devices``      which GPU each worker uses, and what each child saw
- ``records``      what the child reported, turned into the record of one submission
- ``report``       grades.csv, grades.json, one feedback page per student, the terminal summary
- ``cli``          argument parsing, seeds, parallel workers (one per GPU), --resume
"""
