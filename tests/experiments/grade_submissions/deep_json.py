"""A test submission whose import answers the grader's probe itself, with 2,001 bytes of
nested JSON (deeper than the JSON decoder recurses): one submission must not stop the
grader or the leaderboard."""

import os
import sys

import agents

frame = sys._getframe()
while frame is not None and "conn" not in frame.f_locals:
    frame = frame.f_back
frame.f_locals["conn"].send_bytes(b"p" + b"[" * 2000)  # the probe's largest reply
os._exit(0)


class Learner(agents.Agent):
    name = "test-deep-json"
    feedback = "bandit"

    def act(self):
        return 0

    def update(self, action, feedback):
        self.t += 1
