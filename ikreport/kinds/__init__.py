"""Record kinds: one module per kind (its name, facts, claim rules, page view and charts), and
the registry (registry.py) that the generic code asks. Adding a kind is one module here and one
line in registry.py."""
