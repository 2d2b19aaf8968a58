"""Text and image renderings of a game, with numpy only (no plotting dependency).

A :class:`RenderTrack` accumulates what one viewer knows about the game, round by
round; the renderers draw a track, so the same code draws two pictures:

* the experimenter's full picture (``env.unwrapped.render()``): the points played
  and, for linear families, the cumulative loss parameter of every coordinate;
* the learner's picture (``render()`` through the
  :class:`~dp_online_envs.wrappers.FeedbackGuard`): only the learner's own points and
  the feedback it received, so the cumulative parameter is drawn under full
  information only.

* ``ansi``: the round, the cumulative and last loss, the last point, and per
  coordinate the average play (for arms: how often each arm was pulled).
* ``rgb_array``: on a two-dimensional domain the recent points in the plane;
  otherwise two bar charts, blue for the average play per coordinate and red for the
  cumulative loss parameter per coordinate (when the track holds it), best coordinate
  in green.
"""

from __future__ import annotations

from typing import Any

import numpy as np

WIDTH, HEIGHT = 480, 320
BLUE, RED, GREEN, GREY = (50, 90, 200), (200, 60, 50), (40, 160, 70), (200, 200, 200)
RECENT = 500  # points kept for the two-dimensional picture


class RenderTrack:
    """What one viewer has seen of a game so far: points, losses and maybe parameters.

    Args:
        domain: The decision set (public).
        loss: The loss family (public).
        horizon: T.
        with_params: Whether the viewer sees ``theta_t`` (the experimenter, or a learner
            with full-information feedback); the cumulative parameter is then kept for
            linear families.
        title: The first word of the text rendering (the env id).
    """

    def __init__(self, domain: Any, loss: Any, horizon: int, with_params: bool,
                 title: str) -> None:
        self.domain, self.loss, self.horizon, self.title = domain, loss, int(horizon), title
        self.with_params = bool(with_params and loss.linear_in_theta)
        self.round = 0
        self.cumulative_loss = 0.0
        self.projected_actions = 0
        self.point_sum = np.zeros(domain.dim)
        self.theta_sum = np.zeros(loss.param_dim) if self.with_params else None
        self.recent: list[np.ndarray] = []
        self.last: tuple[np.ndarray, float] | None = None

    def add(self, point: np.ndarray, loss: float, theta: np.ndarray | None = None,
            projected: bool = False) -> None:
        """Record one round: the point played, its loss and (if seen) the parameter."""
        x = np.array(point, dtype=np.float64)
        self.round += 1
        self.cumulative_loss += float(loss)
        self.projected_actions += int(bool(projected))
        self.point_sum += x
        if self.theta_sum is not None and theta is not None:
            self.theta_sum += np.asarray(theta, dtype=np.float64)
        self.recent.append(x)
        del self.recent[:-RECENT]
        self.last = (x, float(loss))


def render_ansi(track: RenderTrack) -> str:
    """A short text report of the game so far."""
    t = track.round
    lines = [f"{track.title}  round {t}/{track.horizon}"]
    if t == 0 or track.last is None:
        return lines[0] + "  (no round played yet)\n"
    x, loss = track.last
    lines.append(f"cumulative loss {track.cumulative_loss:.4f}  last loss {loss:.4f}  "
                 f"projected actions {track.projected_actions}")
    lines.append("last point " + np.array2string(x[:12], precision=3, suppress_small=True)
                 + (" ..." if x.size > 12 else ""))
    mean = track.point_sum / t
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


def render_rgb(track: RenderTrack) -> np.ndarray:
    """An ``(HEIGHT, WIDTH, 3)`` uint8 picture of the game so far."""
    img = np.full((HEIGHT, WIDTH, 3), 255, dtype=np.uint8)
    if track.round == 0:
        return img
    domain = track.domain
    if domain.dim == 2 and track.recent:
        pts = np.array(track.recent)
        r = max(float(np.abs(pts).max()), float(domain.norm_bound(np.inf)), 1e-12)
        cols = ((pts[:, 0] / r + 1) / 2 * (WIDTH - 21) + 10).astype(int)
        rows = ((1 - (pts[:, 1] / r + 1) / 2) * (HEIGHT - 21) + 10).astype(int)
        img[HEIGHT // 2, :] = GREY
        img[:, WIDTH // 2] = GREY
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                img[np.clip(rows + dr, 0, HEIGHT - 1), np.clip(cols + dc, 0, WIDTH - 1)] = BLUE
        return img
    k = min(domain.dim, 64)
    _bars(img, track.point_sum[:k] / track.round, 10, HEIGHT // 2 - 10, BLUE)
    if track.theta_sum is not None and track.loss.param_dim == domain.dim:
        cum = track.theta_sum[:k]
        _bars(img, cum, HEIGHT // 2 + 10, HEIGHT - 10, RED, best=int(np.argmin(cum)))
    return img


def render(track: RenderTrack, mode: str) -> str | np.ndarray:
    """``render_ansi`` or ``render_rgb`` by mode name."""
    return render_ansi(track) if mode == "ansi" else render_rgb(track)
