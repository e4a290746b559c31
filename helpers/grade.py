"""``python -m helpers.grade SUBMISSIONS --out DIR``: grade a folder (or zip) of submitted notebooks.

The implementation lives in ``helpers/grading/`` (one small module per pipeline step);
``docs/grading.md`` is the instructors' guide and the threat model.
"""

from helpers.grading.slurm import main  # --slurm options, else the single-host run (cli)

if __name__ == "__main__":
    raise SystemExit(main())
