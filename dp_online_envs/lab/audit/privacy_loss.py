"""The exact privacy loss of one round for exponential weights on arms: what an audit of
the action sequence could see at best.

The one-run audit (:mod:`.one_run`) guesses each round's loss from the arms alone, with
rules that do not know the learner. When a learner's noise-free twin is not refuted,
either the twin is nearly private (no audit could refute it) or the rules do not read
its mechanism. This module tells the two apart for the mechanism of ``exp2`` /
``exp3`` on K arms (and of ``private-exp2``, which feeds them Laplace-noised losses):
``p_s = (1 - gamma) softmax(w_s) + gamma / K``, ``w_{s+1} = w_s - eta (l_s / p_s(a_s))
e_{a_s}``.

For a played game (its arms ``a`` and the losses ``l`` fed to the weights) and a round
``t``, :func:`exp_weights_privacy_loss` computes

    L_t = ln P[a_{t+1..T} | round t fed x_t] - ln P[a_{t+1..T} | round t fed y_t],

every other round fed what it was fed. Round ``t``'s own arm and everything before it
do not depend on round ``t``'s loss, so ``L_t`` is the log-likelihood ratio of the whole
action sequence between the two neighbouring inputs (``x_t``, ``y_t``: the two losses of
round ``t``'s pair on the arm played), given the other rounds. It is the statistic of
the best guess about round ``t`` by an auditor that knows the learner, its parameters and
every other round's input: guess ``x_t`` when ``L_t > 0``; among the rounds with ``|L_t|
> c`` that guess is right with probability at least ``e^c / (1 + e^c)``. No audit that
knows less does better, so :func:`exp_weights_privacy_loss` bounds what any guess rule
of the one-run audit can find on this mechanism, and it says whether the mechanism's
output is far from private (``|L_t|`` often above the claim) or close to it.

With ``noise_scale = b > 0`` the learner fed ``x_t + Z`` with ``Z ~ Laplace(b)`` (the
private reduction of ``private-exp2``, its discrete Laplace taken continuous here):
``P[a | x_t] = E_Z P[a | x_t + Z]``, integrated on a grid of ``nodes`` points over
``[-10 b, 10 b]`` (the weight outside is ``e^-10``). ``window`` counts only the arms of
the ``window`` rounds after ``t``: the loss an auditor would see if only those rounds
could be read (the others confounded by other canaries).

``tests/audit/test_privacy_loss.py`` checks ``L_t`` against an enumeration of every
action sequence of small games (``T = 5``, ``K = 2`` and 3), and that ``E[e^{-L_t}] = 1``
under the first input, as a likelihood ratio must.

**The tree counter** (``private-ftrl``'s :class:`~agents.privacy.counters.tree.AgarwalSinghCounter`
with Laplace noise): a round's loss vector enters one node per level, ``levels`` nodes,
each released with independent ``Laplace(b)`` noise on every coordinate (``b = levels
Delta_1 / epsilon``), and every release is a sum of nodes. An auditor that knew every
other round's loss and could read every node's noisy value exactly (more than the
released points give: they are the nodes' sums, up to a constant) sees, for a round whose
pair differs by ``+-1`` on ``k`` coordinates, the privacy loss
:func:`tree_laplace_privacy_loss` draws: the sum of ``levels k`` independent terms
``(|Z + 1| - |Z|) / b``, ``Z ~ Laplace(b)``. Each term is at most ``1 / b`` in absolute
value and has mean ``1 / b + e^{-1/b} - 1`` (the Laplace KL divergence), so the sum is at
most ``levels k / b <= epsilon`` and concentrated near ``levels k / (2 b^2)`` when ``b``
is large: the learner's worst case is its claim, its typical round far below it.
"""

from __future__ import annotations

import math

import numpy as np

from dp_online_envs.validation import check_int, check_real

__all__ = ["exp_weights_privacy_loss", "exp_weights_probabilities",
           "tree_laplace_privacy_loss"]


def _probs(log_weights: np.ndarray, gamma: float, k: int) -> np.ndarray:
    w = np.exp(log_weights - log_weights.max(axis=-1, keepdims=True))
    return (1.0 - gamma) * w / w.sum(axis=-1, keepdims=True) + gamma / k


def exp_weights_probabilities(arms: np.ndarray, fed: np.ndarray, k: int, eta: float,
                              gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """Replay exponential weights on arms: ``(log_weights, p)``, ``(T, K)`` the
    log-weights before each round and ``(T,)`` the probability of the arm played.

    Args:
        arms: ``(T,)`` the arms played, in ``0..k-1``.
        fed: ``(T,)`` the losses the weights were updated with (normalized, any sign).
        k: The number of arms.
        eta: The learning rate per unit of normalized loss.
        gamma: The uniform mixing weight, in ``[0, 1]``.

    Raises:
        ValueError: Mismatched shapes, arms outside ``0..k-1`` or invalid parameters.
    """
    arms, fed, k = _check(arms, fed, k)
    eta = check_real("eta", eta, 0.0)
    gamma = check_real("gamma", gamma, 0.0, 1.0)
    horizon = arms.size
    lw = np.zeros(k)
    history = np.zeros((horizon, k))
    played = np.zeros(horizon)
    for s in range(horizon):
        history[s] = lw
        p = _probs(lw, gamma, k)[arms[s]]
        played[s] = p
        lw = lw.copy()
        lw[arms[s]] -= eta * fed[s] / p
    return history, played


def _check(arms: np.ndarray, fed: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, int]:
    k = check_int("k", k, 1)
    arms = np.asarray(arms, np.int64)
    fed = np.asarray(fed, np.float64)
    if arms.ndim != 1 or fed.shape != arms.shape:
        raise ValueError(f"arms {arms.shape} and fed {fed.shape} must be the same (T,) shape")
    if arms.size and (arms.min() < 0 or arms.max() >= k):
        raise ValueError(f"arms range over [{arms.min()}, {arms.max()}], expected 0..{k - 1}")
    return arms, fed, k


def exp_weights_privacy_loss(arms: np.ndarray, fed: np.ndarray, first: np.ndarray,
                             second: np.ndarray, rounds: np.ndarray, *, k: int, eta: float,
                             gamma: float, noise_scale: float = 0.0,
                             window: int | None = None, nodes: int = 41) -> np.ndarray:
    """``L_t = ln P[arms | round t fed first[t]] - ln P[arms | round t fed second[t]]``
    for each ``t`` in ``rounds``, every other round fed ``fed`` (module docstring).

    Args:
        arms: ``(T,)`` the arms played.
        fed: ``(T,)`` the normalized losses the weights were updated with (the noisy ones
            for a learner that adds noise).
        first, second: ``(T,)`` the two normalized losses of each round's pair on the
            arm played (read at ``rounds`` only).
        rounds: The rounds (0-based indices) whose loss is computed.
        k, eta, gamma: The mechanism (:func:`exp_weights_probabilities`).
        noise_scale: The scale ``b`` of the Laplace noise added to round ``t``'s loss
            before the update (0: fed exactly).
        window: Count only the arms of rounds ``t + 1 .. t + window`` (``None``: to the
            end).
        nodes: Grid points of the noise integral (odd, ``>= 3``; unused when ``b = 0``).

    Returns:
        ``(len(rounds),)`` the losses ``L_t``, in the order of ``rounds``.

    Raises:
        ValueError: Mismatched shapes, rounds outside ``0..T-1``, invalid parameters.
    """
    arms, fed, k = _check(arms, fed, k)
    first, second = np.asarray(first, np.float64), np.asarray(second, np.float64)
    if first.shape != arms.shape or second.shape != arms.shape:
        raise ValueError(f"first {first.shape} and second {second.shape} must be "
                         f"{arms.shape}, one loss a round")
    b = check_real("noise_scale", noise_scale, 0.0)
    if window is not None:
        window = check_int("window", window, 1)
    nodes = check_int("nodes", nodes, 3)
    if nodes % 2 == 0:
        raise ValueError(f"nodes={nodes} rejected: expected an odd number (0 a node)")
    ts = np.asarray(rounds, np.int64).ravel()
    horizon = arms.size
    if ts.size and (ts.min() < 0 or ts.max() >= horizon):
        raise ValueError(f"rounds range over [{ts.min()}, {ts.max()}], expected 0..{horizon - 1}")
    if ts.size == 0:
        return np.zeros(0)
    history, played = exp_weights_probabilities(arms, fed, k, eta, gamma)
    if b > 0:
        grid = np.linspace(-10.0 * b, 10.0 * b, nodes)
        log_density = -np.abs(grid) / b + math.log(grid[1] - grid[0])
    else:
        grid, log_density = np.zeros(1), np.zeros(1)
    g = grid.size
    branch_t = np.repeat(ts, g)
    out = []
    for values in (first, second):
        alt = (values[ts][:, None] + grid[None, :]).ravel()
        out.append(_branch_log_probability(arms, fed, history, played, branch_t, alt, k,
                                           eta, gamma, window).reshape(ts.size, g)
                   + log_density[None, :])
    # ln E_Z P[...] by log-sum-exp over the grid, per round and side
    sides = [np.logaddexp.reduce(side, axis=1) for side in out]
    return sides[0] - sides[1]


def _branch_log_probability(arms: np.ndarray, fed: np.ndarray, history: np.ndarray,
                            played: np.ndarray, ts: np.ndarray, alt: np.ndarray, k: int,
                            eta: float, gamma: float, window: int | None) -> np.ndarray:
    """``ln P[arms[t+1 .. t+window] | round t fed alt]`` per branch ``(ts[i], alt[i])``,
    every other round fed ``fed``: all branches replayed at once, round by round."""
    n = ts.size
    state = history[ts].copy()
    state[np.arange(n), arms[ts]] -= eta * alt / played[ts]
    total = np.zeros(n)
    last = arms.size - 1 if window is None else min(arms.size - 1, int(ts.max()) + window)
    for s in range(int(ts.min()) + 1, last + 1):
        live = (ts < s) if window is None else (ts < s) & (s <= ts + window)
        if not live.any():
            continue
        a = arms[s]
        rows = state[live]
        p = _probs(rows, gamma, k)[:, a]
        total[live] += np.log(p)
        rows[:, a] -= eta * fed[s] / p
        state[live] = rows
    return total


def tree_laplace_privacy_loss(differing: np.ndarray, levels: int, scale: float,
                              rng: np.random.Generator) -> np.ndarray:
    """Draws of the privacy loss of rounds fed to a Laplace tree counter, seen by an
    auditor that reads every node and knows every other round (module docstring).

    Args:
        differing: ``(m,)`` how many coordinates each round's pair differs on (by 1).
        levels: Nodes a round enters (one per level).
        scale: The Laplace scale ``b`` of every node's coordinate.
        rng: Draws the noise.

    Returns:
        ``(m,)`` draws of ``L_t`` (positive: the input played is the likelier; at most
        ``levels * differing / scale`` in absolute value).

    Raises:
        ValueError: Negative counts, ``levels < 1`` or ``scale <= 0``.
    """
    counts = np.asarray(differing, np.int64)
    if counts.ndim != 1 or (counts.size and counts.min() < 0):
        raise ValueError(f"differing must be a (m,) array of counts >= 0, got {counts!r}")
    levels = check_int("levels", levels, 1)
    b = check_real("scale", scale, 0.0, low_inclusive=False)
    out = np.zeros(counts.size)
    terms = levels * counts
    for n in np.unique(terms[terms > 0]):
        rows = np.flatnonzero(terms == n)
        z = rng.laplace(0.0, b, size=(rows.size, int(n)))
        out[rows] = ((np.abs(z + 1.0) - np.abs(z)) / b).sum(axis=1)
    return out
