"""Text and image renderings of a game, with numpy only (no plotting dependency).

* ``ansi``: the round, the cumulative and last loss, the last point, and per
  coordinate the learner's average play (for arms: how often each arm was pulled).
* ``rgb_array``: on a two-dimensional domain the learner's recent points in the plane;
  otherwise two bar charts, blue for the average play per coordinate and red for the
  cumulative loss parameter per coordinate (linear families), best coordinate in green.
"""

from __future__ import annotations

import numpy as np

WIDTH, HEIGHT = 480, 320
BLUE, RED, GREEN, GREY = (50, 90, 200), (200, 60, 50), (40, 160, 70), (200, 200, 200)


def render_ansi(env) -> str:
    """A short text report of the game so far."""
    t = env.round
    lines = [f"{env.spec.id if env.spec else 'OnlineLearningEnv'}  round {t}/{env.horizon}"]
    if t == 0 or env._last is None:
        return lines[0] + "  (no round played yet)\n"
    x, loss = env._last
    lines.append(f"cumulative loss {env.cumulative_loss:.4f}  last loss {loss:.4f}  "
                 f"projected actions {env.projected_actions}")
    lines.append("last point " + np.array2string(x[:12], precision=3, suppress_small=True)
                 + (" ..." if x.size > 12 else ""))
    mean = env._point_sum / t
    shown = min(mean.size, 16)
    for i in range(shown):
        bar = "#" * int(round(30 * min(1.0, abs(mean[i]) / max(np.abs(mean).max(), 1e-12))))
        lines.append(f"  x[{i:2d}] avg {mean[i]:+.3f} {bar}")
    if mean.size > shown:
        lines.append(f"  ... {mean.size - shown} more coordinates")
    return "\n".join(lines) + "\n"


def _bars(img: np.ndarray, values: np.ndarray, top: int, bottom: int, color, best=None) -> None:
    n = values.size
    scale = max(np.abs(values).max(), 1e-12)
    width = max(1, (WIDTH - 20) // n)
    for i, v in enumerate(values):
        h = int((bottom - top) * abs(v) / scale)
        x0 = 10 + i * width
        img[bottom - h:bottom, x0:x0 + max(1, width - 2)] = GREEN if i == best else color
    img[bottom, 10:WIDTH - 10] = GREY


def render_rgb(env) -> np.ndarray:
    """An ``(HEIGHT, WIDTH, 3)`` uint8 picture of the game so far."""
    img = np.full((HEIGHT, WIDTH, 3), 255, dtype=np.uint8)
    if env.round == 0:
        return img
    if env.domain.dim == 2 and env._recent:
        pts = np.array(env._recent)
        r = max(float(np.abs(pts).max()), float(env.domain.norm_bound(np.inf)), 1e-12)
        cols = ((pts[:, 0] / r + 1) / 2 * (WIDTH - 21) + 10).astype(int)
        rows = ((1 - (pts[:, 1] / r + 1) / 2) * (HEIGHT - 21) + 10).astype(int)
        img[HEIGHT // 2, :] = GREY
        img[:, WIDTH // 2] = GREY
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                img[np.clip(rows + dr, 0, HEIGHT - 1), np.clip(cols + dc, 0, WIDTH - 1)] = BLUE
        return img
    k = min(env.domain.dim, 64)
    _bars(img, env._point_sum[:k] / env.round, 10, HEIGHT // 2 - 10, BLUE)
    if env.loss.linear_in_theta and env.loss.param_dim == env.domain.dim:
        cum = env._theta_sum[:k]
        _bars(img, cum, HEIGHT // 2 + 10, HEIGHT - 10, RED, best=int(np.argmin(cum)))
    return img
