"""The instructors' batch grader: ``python -m helpers.grade SUBMISSIONS --out DIR``.

A pipeline of small steps, each in its own module (docs/grading.md has the whole story):

- ``course``       which exercises each course notebook has, and which variable holds each answer,
                   parsed (with ``ast``) from the PRISTINE notebooks in ``notebooks/``
- ``submissions``  unpack a zip, discover one submission per student x notebook, read the cells
- ``child``        the entry point of the fresh per-submission process: reads the job and starts
                   the runner below
- ``cell_runner``  inside the child: the student's cells in one namespace, each under a timer,
                   the tamper check after each
- ``judged_runner`` inside the child: hand each checked answer to the judge and answer its
                   requests; no exercise, reference or key in that process
- ``undrawn``      inside the child: the notebook's own pictures are not drawn (nobody reads them)
- ``judge``        the grader's side of every notebook: the exercises, references and seeds
                   stay here; the checks run on stand-ins for the student's answers
- ``remote``       those stand-ins: the description the student's process gave at check(), and a
                   call that runs where the function lives
- ``executor``     the judged executor ``Exercise.grade`` is given: each operation of a check run
                   where the grader trusts it (its own compiler, tracer, NVRTC, or the student's process)
- ``serve``        the student's side of a judged notebook: stand-in exercise modules, and the
                   operations (call, trace, launch, describe for the compiler, draw) run on plain inputs
- ``workers``      the judge's own NVRTC and tracer processes per submission: what decides a grade
                   never comes from the student's process, and their code never runs in the grader
- ``cells``        the child's tools for one cell: IPython syntax, timers, limits, plain data
- ``execute``      the parent's side of one submission: the job, the child's environment, the
                   judge's workers, a second run that skips a crashing cell
- ``process``      one child process: start, output caps, kill, Ctrl-C (the judge times its phases)
- ``attempt``      what one run of the child left behind, and what went wrong, in words
- ``sandbox``      each child in its own Linux namespaces (bubblewrap or unshare), or says why not
- ``review``       static review: code a course notebook rarely needs, flagged for a human
- ``devices``      which GPU each worker uses, and what each child saw
- ``records``      what the child reported, turned into the record of one submission
- ``report``       grades.csv, grades.json, one feedback page per student, the terminal summary
- ``class_stats``  the class report's numbers (from the rows grades.csv holds); ``causes`` groups
                   failure messages into families and takes students' names out of examples
- ``class_report`` report.html: the class on one self-contained page (inline SVG, no server)
- ``lms``          canvas.csv and moodle.csv, gradebooks the LMSs import; ``roster`` says who is who
- ``outputs``      every file of OUT written from the finished records, and the summary
- ``progress``     the progress bar on a terminal, one line per submission in a log
- ``cli``          argument parsing, seeds, parallel workers (one per GPU), --resume
- ``slurm``        --slurm: the class as a Slurm job array of shards, each a ``cli`` run, then a
                   merge into OUT with ``outputs``; --resume submits only the shards that failed
"""
