# %% [markdown]
# # A course: the instructor's side and the student's
#
# `examples/course/` is a ready assignment: "write an epsilon-DP learner for a
# 10-armed bandit". The instructor hands out `assignment.yaml`, a starter agent and a
# README; students hand back one `.py` file each; `dp-online grade` scores them.
#
# ## The instructor: the assignment file
#
# The file is validated like a sweep file; every key is checked, and a bad one is
# named with what was expected.

# %%
import importlib.util
from pathlib import Path

import gymnasium as gym

import agents
from dp_online_envs.lab.grading.assignment import load_assignment

COURSE = Path("examples/course")
assignment = load_assignment(COURSE / "assignment.yaml")
print(assignment.title)
print("envs:", [e.id for e in assignment.envs], "horizons:", assignment.horizons,
      "hidden seeds:", assignment.seeds)
print("required privacy: epsilon =", assignment.epsilon, "delta =", assignment.delta)
print("references:", [r.label for r in assignment.references])
g = assignment.grading
print(f"points: regret {g.regret.points:g} (full within x{g.regret.factor} of "
      f"{g.regret.reference}, none from x{g.regret.zero_at}), declared budget "
      f"{g.declared:g}, audit {g.audit:g}")

# %% [markdown]
# ## The student: write a learner and try it
#
# A submission is an `agents.Agent` subclass: `setup` fixes its parameters from the
# public `Problem`, `act` picks an arm, `update` learns from the one number it saw,
# and `privacy` declares the guarantee. The sample `honest.py` is EXP3 on
# exactly Laplace-noised losses; the student plays it locally on the assignment's env,
# at a small horizon, next to the references, on the same losses.

# %%
def load_submission(path):
    """The agents.Agent subclass defined in a submission file."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return next(v for v in vars(module).values()
                if isinstance(v, type) and issubclass(v, agents.Agent) and v is not agents.Agent)


env = gym.make(assignment.envs[0].id, horizon=2048)
problem = env.get_wrapper_attr("problem")
eps = assignment.epsilon
mine = load_submission(COURSE / "submissions" / "honest.py")(problem, epsilon=eps, seed=0)
print("declared:", mine.privacy)
players = {"honest.py": mine,
           "private-exp2": agents.make("private-exp2", problem, epsilon=eps, seed=0),
           "exp3 (non-private)": agents.make("exp3", problem, seed=0)}
for label, agent in players.items():
    regrets = [agents.play(env, agent, seed=s).regret for s in range(3)]
    print(f"{label:20s} mean regret over 3 games: {sum(regrets) / 3:7.1f}")

# %% [markdown]
# ## The instructor: grading
#
# The grader plays every submission in its own sandboxed process on hidden seeds
# keyed by a secret, next to the references on the same losses, and scores regret,
# the declared budget and a black-box audit of that claim (the sample `cheat.py`
# declares epsilon = 1 and adds no noise: the audit is there to refute it):
#
# ```bash
# export DP_ONLINE_GRADE_SECRET=...      # keys the hidden seeds; keep it to re-grade
# dp-online grade examples/course/assignment.yaml examples/course/submissions -o grades/
# ```
#
# It writes `grades/grades.csv`, `grades.html` and a report per submission; a full
# grading run takes minutes, so this page does not run it. See
# [grading a course](../guides/course.md) for the sandbox, the score and the reports.
