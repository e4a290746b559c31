"""The fuzz suite: learner mistakes and bad inputs run through a real ipykernel (tests/e2e/test_fuzz.py).

``cases.py`` is the table (grow it with every bug found); ``kernel.py`` runs cells in an ipykernel.
"""
