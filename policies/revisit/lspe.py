"""Learning the re-visit policy's thresholds online: LSPE(0) with a policy gradient.

Avrachenkov & Borkar, "Whittle index policy for crawling ephemeral content: a
reinforcement learning approach" (2019). Under the Whittle policy, source i is crawled
when its state x_i passes a threshold that depends on the other sources' states. Without
the sources' parameters the scheme learns that threshold in a parametric form,
T_i = q0 + q1 s + q2 s^2 with s the others' summed state, and crawls source i with the
logit probability f_i = 1 / (1 + exp(-kappa (x_i - T_i - 0.5))). A critic learns the
relative value V(x) = r . phi(x) by LSPE(0), phi being the states and their pairwise
products; the actor climbs the gradient of the average reward (eq. 7-9).

How the draft is read here:
- The reward is what the crawls collect, sum_i nu_i x_i, and the actor weighs a
  decision's log-likelihood gradient by its temporal difference, reward - eta +
  V(next) - V(now) (Marbach & Tsitsiklis, Proposition 1). Weighed by V(next) alone, as
  eq. (9) is printed, the only signal left is that a source left alone holds more worth,
  and the thresholds climb until little is crawled.
- A(n) averages phi(x_n) (phi(x_{n+1}) - phi(x_n))^T.
- States enter phi and s divided by their upper bounds u_i / (1 - alpha_i), so the
  features are of order one; thresholds are projected on [u_i, u_i / (1 - alpha_i)] and
  B's inverse is Tikhonov-regularised, as in Section V.
- Decisions are drawn with the probabilities f_i, as in the paper's experiment; when more
  sources are drawn than the budget allows, those furthest above their thresholds go
  (the caller's choice; see `policies.revisit.ephemeral.simulate`).
"""

from __future__ import annotations

import math

import numpy as np


class ThresholdLearner:
    """The learning scheme for N sources; `draw` then `learn`, once a period."""

    def __init__(
        self,
        u: np.ndarray,
        alpha: np.ndarray,
        *,
        kappa: float = 2.0,
        critic_step: float = 0.05,
        step_scale: float = 0.5,
        ridge: float = 1e-4,
    ) -> None:
        if not 0.0 < step_scale < 1.0:
            raise ValueError(f"step_scale must be in (0, 1), got {step_scale}")
        if not (math.isfinite(kappa) and kappa > 0):
            raise ValueError(f"kappa must be a positive number, got {kappa}")
        self.u = np.asarray(u, dtype=np.float64)
        self.upper = self.u / (1.0 - np.asarray(alpha, dtype=np.float64))
        self.kappa = kappa
        self.critic_step = critic_step  # LSPE's gamma
        self.step_scale = step_scale  # c of a(n), b(n)
        self.ridge = ridge  # Tikhonov's delta
        n = self.u.size
        # thresholds start half way through the range the states can take
        self.q = np.zeros((n, 3))
        self.q[:, 0] = (self.u + self.upper) / 2.0
        self._pairs = np.triu_indices(n)
        features = n + self._pairs[0].size
        self.r = np.zeros(features)
        self.eta = 0.0
        self._a = np.zeros((features, features))
        self._b = np.zeros(features)
        self._b_matrix = 1e-3 * np.eye(features)  # B(-1) = epsilon I
        self._steps = 0

    def thresholds(self, x: np.ndarray) -> np.ndarray:
        """T_i(x_-i), projected on [u_i, u_i / (1 - alpha_i)]."""
        return np.clip(np.einsum("ij,ij->i", self.q, self._psi(x)), self.u, self.upper)

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        """f_i: the probability of crawling each source in state x."""
        margin = self.kappa * (x - self.thresholds(x) - 0.5)
        return 1.0 / (1.0 + np.exp(-np.clip(margin, -60.0, 60.0)))

    def draw(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The sources the policy would crawl in state x, each with probability f_i."""
        return rng.random(x.size) < self.probabilities(x)

    def learn(self, x: np.ndarray, crawled: np.ndarray, reward: float, x_next: np.ndarray) -> None:
        """One period's update of the critic (LSPE(0)) and the thresholds (eq. 9)."""
        self._steps += 1
        n = self._steps
        critic_rate = self.step_scale / math.ceil(n / 1000) ** (2 / 3)  # b(n)
        actor_rate = self.step_scale / math.ceil(n / 500)  # a(n)
        phi, phi_next = self._phi(x), self._phi(x_next)
        self.eta += critic_rate * (reward - self.eta)
        self._b_matrix += critic_rate * (np.outer(phi, phi) - self._b_matrix)
        self._a += critic_rate * (np.outer(phi, phi_next - phi) - self._a)
        self._b += critic_rate * (phi * (reward - self.eta) - self._b)
        gram = self._b_matrix.T @ self._b_matrix + self.ridge * np.eye(self.r.size)
        self.r += self.critic_step * np.linalg.solve(
            gram, self._b_matrix.T @ (self._a @ self.r + self._b)
        )
        advantage = reward - self.eta + float(self.r @ phi_next) - float(self.r @ phi)
        self.q += actor_rate * advantage * self._log_likelihood_gradient(x, crawled)
        # keep the parameters where the projected thresholds still respond to them
        spread = (self.upper - self.u)[:, None]
        self.q[:, 0] = np.clip(self.q[:, 0], self.u, self.upper)
        self.q[:, 1:] = np.clip(self.q[:, 1:], -spread, spread)

    def _log_likelihood_gradient(self, x: np.ndarray, crawled: np.ndarray) -> np.ndarray:
        """d log p(decision | x) / dq, eq. (8): each row is source i's q^i."""
        f = self.probabilities(x)
        # crawled: d log f / dT = -kappa (1 - f); left alone: d log (1 - f) / dT = kappa f
        d_threshold = np.where(crawled, -self.kappa * (1.0 - f), self.kappa * f)
        return d_threshold[:, None] * self._psi(x)

    def _psi(self, x: np.ndarray) -> np.ndarray:
        """[1, s, s^2] for each source, s the others' states over their upper bounds."""
        scaled = x / self.upper
        others = (scaled.sum() - scaled) / max(scaled.size - 1, 1)
        return np.stack([np.ones_like(others), others, others**2], axis=1)

    def _phi(self, x: np.ndarray) -> np.ndarray:
        scaled = x / self.upper
        return np.concatenate([scaled, np.outer(scaled, scaled)[self._pairs]])
