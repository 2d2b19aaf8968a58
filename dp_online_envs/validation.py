"""Validation of the numeric arguments of the suite: one place, one wording.

Every public entry point that takes a count (``horizon``, a dimension, a number of
arms) or a privacy parameter (``epsilon``, ``delta``) checks it here, so the same
value is accepted or refused everywhere (env constructor, ``agents.make``, the
counters, sweeps and the CLI) with the same message::

    horizon=1.5 rejected: expected an integer >= 1, got a float
    epsilon=True rejected: expected a finite real number > 0, got a bool
    delta=1.0 rejected: expected a real number in [0, 1)

Rules:
    * An integer argument takes a Python ``int`` or a numpy integer. ``bool``, floats
      (even integral ones such as ``3.0``: a float count is a bug upstream, not a
      rounding to do silently), strings and complex numbers are refused.
    * A real argument takes any real number (``int``, ``float``, numpy scalars,
      ``fractions.Fraction``) except ``bool``; NaN, strings and complex numbers are
      refused.
    * ``epsilon`` lies in ``(0, inf)`` and ``delta`` in ``[0, 1)``: :data:`EPSILON_RANGE`
      and :data:`DELTA_RANGE` are the one definition. Gaussian noise needs more,
      ``delta > 0``: :func:`check_gaussian_delta` is that one rule on top of it.

:func:`did_you_mean` is the suggestion "unknown name" errors end with (env ids, agents,
counters).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable
from numbers import Integral, Real

import numpy as np

__all__ = ["DELTA_RANGE", "EPSILON_RANGE", "check_bool", "check_delta", "check_epsilon",
           "check_gaussian_delta", "check_int", "check_real", "did_you_mean"]

#: ``(low, high, low_inclusive, high_inclusive)`` of the privacy parameter epsilon.
EPSILON_RANGE: tuple[float, float, bool, bool] = (0.0, math.inf, False, False)
#: ``(low, high, low_inclusive, high_inclusive)`` of the privacy parameter delta.
DELTA_RANGE: tuple[float, float, bool, bool] = (0.0, 1.0, True, False)


def _refuse(name: str, value: object, expected: str, *, wrong_type: bool) -> ValueError:
    message = f"{name}={value!r} rejected: expected {expected}"
    if wrong_type:
        kind = type(value).__name__
        message += f", got {'an' if kind[:1].lower() in 'aeiou' else 'a'} {kind}"
    return ValueError(message)


def _is_bool(value: object) -> bool:
    return isinstance(value, (bool, np.bool_))


def check_bool(name: str, value: object) -> bool:
    """``value`` as a Python bool, refusing anything that is not ``True`` or ``False``
    (a NumPy bool is accepted; ``0``, ``1`` and strings are not).

    Raises:
        ValueError: Naming ``name``, the value and its type.
    """
    if not _is_bool(value):
        raise _refuse(name, value, "True or False", wrong_type=True)
    return bool(value)


def check_int(name: str, value: object, minimum: int | None = None,
              maximum: int | None = None) -> int:
    """``value`` as a Python int, refusing anything that is not an integer.

    Args:
        name: The argument's name, used in the message.
        value: The value to check: a Python ``int`` or a numpy integer.
        minimum: The smallest value allowed (``None``: no lower bound).
        maximum: The largest value allowed (``None``: no upper bound).

    Returns:
        ``int(value)``.

    Raises:
        ValueError: ``value`` is a bool, a float (even ``3.0``), a string, a complex
            number or another non-integer, or lies outside ``[minimum, maximum]``. The
            message names the argument, the value given and what was expected (and the
            value's type when that is what is wrong).
    """
    if maximum is None:
        expected = "an integer" if minimum is None else f"an integer >= {minimum}"
    elif minimum is None:
        expected = f"an integer <= {maximum}"
    else:
        expected = f"an integer in [{minimum}, {maximum}]"
    if _is_bool(value) or not isinstance(value, Integral):
        raise _refuse(name, value, expected, wrong_type=True)
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise _refuse(name, value, expected, wrong_type=False)
    return int(value)


def _interval(low: float, high: float, low_inclusive: bool, high_inclusive: bool) -> str:
    if high == math.inf and low == -math.inf:
        return "a finite real number"
    if high == math.inf:
        return f"a finite real number {'>=' if low_inclusive else '>'} {low:g}"
    if low == -math.inf:
        return f"a finite real number {'<=' if high_inclusive else '<'} {high:g}"
    return (f"a real number in {'[' if low_inclusive else '('}{low:g}, {high:g}"
            f"{']' if high_inclusive else ')'}")


def check_real(
    name: str,
    value: object,
    low: float = -math.inf,
    high: float = math.inf,
    *,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
) -> float:
    """``value`` as a finite Python float in an interval.

    Args:
        name: The argument's name, used in the message.
        value: The value to check: any real number but a bool.
        low: Lower end of the interval (``-inf``: unbounded below).
        high: Upper end of the interval (``inf``: unbounded above).
        low_inclusive: Whether ``low`` itself is allowed.
        high_inclusive: Whether ``high`` itself is allowed.

    Returns:
        ``float(value)``.

    Raises:
        ValueError: ``value`` is a bool, a string, a complex number, NaN or infinite,
            or lies outside the interval. The message names the argument, the value
            given and the interval (and the value's type when that is what is wrong).
    """
    expected = _interval(low, high, low_inclusive, high_inclusive)
    if _is_bool(value) or not isinstance(value, Real):
        raise _refuse(name, value, expected, wrong_type=True)
    v = float(value)
    inside = (math.isfinite(v)
              and (v >= low if low_inclusive else v > low)
              and (v <= high if high_inclusive else v < high))
    if not inside:
        raise _refuse(name, value, expected, wrong_type=False)
    return v


def check_epsilon(value: object, name: str = "epsilon") -> float:
    """The privacy parameter epsilon as a float in :data:`EPSILON_RANGE` ``(0, inf)``.

    Raises:
        ValueError: As :func:`check_real`.
    """
    low, high, low_inc, high_inc = EPSILON_RANGE
    return check_real(name, value, low, high, low_inclusive=low_inc, high_inclusive=high_inc)


def check_delta(value: object, name: str = "delta") -> float:
    """The privacy parameter delta as a float in :data:`DELTA_RANGE` ``[0, 1)``.

    Raises:
        ValueError: As :func:`check_real`.
    """
    low, high, low_inc, high_inc = DELTA_RANGE
    return check_real(name, value, low, high, low_inclusive=low_inc, high_inclusive=high_inc)


def check_gaussian_delta(value: object, name: str = "delta", *, hint: str = "") -> float:
    """An allowed delta (:func:`check_delta`) that is not 0, as Gaussian noise needs.

    Gaussian noise gives (epsilon, delta)-DP for every ``delta > 0`` and no pure
    epsilon-DP, so a Gaussian mechanism takes delta in ``(0, 1)``.

    Args:
        value: The value to check.
        name: The argument's name, used in the message.
        hint: What the caller adds to the message of a refused 0 (who needs Gaussian
            noise, how to pass a delta).

    Returns:
        ``float(value)``.

    Raises:
        ValueError: As :func:`check_delta`, or ``value`` is 0.
    """
    d = check_delta(value, name)
    if d == 0.0:
        raise _refuse(name, value, "a real number in (0, 1) for Gaussian noise (it gives "
                      f"no pure epsilon-DP){'; ' + hint if hint else ''}", wrong_type=False)
    return d


def did_you_mean(value: object, choices: Iterable[str]) -> str:
    """`` did you mean 'X'?`` naming the choice closest to a misspelt name, or ``""``.

    Args:
        value: The name that was not found.
        choices: The valid names.

    Returns:
        A clause to put in an "unknown name" message (with a leading space) naming the
        closest match (``difflib.get_close_matches``, case-insensitive), or an empty
        string when nothing is close or ``value`` is not a string.
    """
    if not isinstance(value, str):
        return ""
    by_lower = {c.lower(): c for c in choices}
    close = difflib.get_close_matches(value.lower(), list(by_lower), n=1, cutoff=0.6)
    return f" did you mean {by_lower[close[0]]!r}?" if close else ""
