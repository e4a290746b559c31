"""Mutation testing of the exercises' checks: wrong answers derived from each reference solution.

A check is proven, not patched: every reference is rewritten by small operators (a guard off by
one, a barrier removed, an atomic made plain, the work serialized in thread 0...) and each
exercise's check must reject every such mutant, or the mutant is listed as equivalent with the
reason it computes the right thing the way the exercise asks.

Modules: ``sites`` (enumerating and rewriting one AST node at a time), ``kernel_ops`` and
``host_ops`` (the operators), ``build`` (a mutant's source as an importable kernel or function),
``equivalent`` (the mutants that are right, and why), ``run`` (grading every mutant),
``report`` (docs/mutation-report.md and docs/data/mutation-<mode>.json), ``journal`` (a run's
outcomes as they come, so a stopped run resumes), ``__main__`` (the command).
"""
