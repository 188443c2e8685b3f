"""Record kinds: one module per kind (its name, facts, claim rules, page view and charts), or one
package for a kind too big for a module (ncu_profile/), and the registry (registry.py) that the
generic code asks. Adding a kind is one module here and one line in registry.py."""
