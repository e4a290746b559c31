"""Fixture builders for the grader's tests and benchmark: a small pristine course notebook and
submissions made from it (perfect, wrong, hostile...), written into tmp folders at test time."""
