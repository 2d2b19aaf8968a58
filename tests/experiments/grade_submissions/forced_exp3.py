"""A test submission that keeps every arm in play: plain EXP3 (no noise) that also plays
arm ``(t // 64) mod K`` every 64th round, declaring epsilon-DP. No arm's rate of play
ever falls to zero, which an audit waiting for an arm to go unplayed needs; the forced
rounds are not fed to EXP3."""

from agents.bandit.exp3 import EXP3
from agents.privacy import PrivacyGuarantee

#: Every this many rounds, one arm is played by schedule.
EVERY = 64


class Learner(EXP3):
    name = "test-forced-exp3"
    private = True

    def setup(self, **options):
        super().setup(**options)
        self.privacy = PrivacyGuarantee(self.epsilon, 0.0, mechanism="none: a false claim")
        self._forced = False

    def act(self):
        self._forced = self.t % EVERY == EVERY - 1
        if self._forced:
            return (self.t // EVERY) % self.k
        return super().act()

    def update(self, action, feedback):
        if self._forced:
            self.t += 1
            return
        super().update(action, feedback)
