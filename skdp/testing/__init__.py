"""Empirical privacy auditing, used by skdp's test suite and available to users."""

from skdp.testing._audit import AuditResult, audit_epsilon, clopper_pearson
from skdp.testing._mechanism_cases import MechanismCase, mechanism_audit_cases

__all__ = [
    "AuditResult",
    "MechanismCase",
    "audit_epsilon",
    "clopper_pearson",
    "mechanism_audit_cases",
]
