"""Rules that implementers add: scheduled scans that raise notifications (Python and SQL rules)."""

# Write a Python rule by subclassing `Rule` and decorating it with `@register` in a `rules.py`
# module of any installed app (found automatically); write an SQL rule in the admin (`SqlRule`).
# Celery beat runs the due ones (`rules.tasks.run_due_rules`), and
# `python manage.py run_rules` runs them by hand. See docs/guide/rules.md.

from .base import Alert, Rule, RuleRegistry, register, registry

__all__ = ["Alert", "Rule", "RuleRegistry", "register", "registry"]
