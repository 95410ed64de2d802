"""A stand-in for gymnasium's `CartPole-v1`, so the reinforcement-learning scripts run without gym.

The classic cart-pole dynamics (Barto, Sutton and Anderson, 1983) with CartPole-v1's
constants, interface and episode rules: `reset(seed=None) -> (state, info)`,
`step(action) -> (state, reward, terminated, truncated, info)`, a reward of 1 per step, the
episode ending when the pole leans past 12 degrees or the cart leaves the track, and truncated
after 500 steps. States are float32 NumPy arrays of 4 numbers, as gym's are.

gymnasium is an installed library, whose code carve does not compile in turn (it compiles the
user's callees only, runtime/user_code.py); this file lives among the tests, so its methods are
marked `torch.compiler.disable` to stay out of every compiler alike, as the library's would.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import torch


class CartPole:
    gravity = 9.8
    cart_mass = 1.0
    pole_mass = 0.1
    pole_half_length = 0.5
    force_magnitude = 10.0
    seconds_per_step = 0.02
    max_angle = 12 * 2 * math.pi / 360
    max_position = 2.4
    max_steps = 500

    def __init__(self) -> None:
        self.spec = SimpleNamespace(reward_threshold=475.0)
        self.random = np.random.default_rng()
        self.state = np.zeros(4)
        self.steps = 0
        # Steps over every episode: the work an episode loop did (its length follows the actions).
        self.steps_taken = 0

    @torch.compiler.disable
    def reset(self, seed: int | None = None):
        if seed is not None:
            self.random = np.random.default_rng(seed)
        self.state = self.random.uniform(-0.05, 0.05, size=4)
        self.steps = 0
        return self.state.astype(np.float32), {}

    @torch.compiler.disable
    def step(self, action: int):
        x, x_dot, theta, theta_dot = self.state
        force = self.force_magnitude if action == 1 else -self.force_magnitude
        total_mass = self.cart_mass + self.pole_mass
        pole_moment = self.pole_mass * self.pole_half_length
        cos, sin = math.cos(theta), math.sin(theta)
        temp = (force + pole_moment * theta_dot ** 2 * sin) / total_mass
        theta_acc = (self.gravity * sin - cos * temp) / (
            self.pole_half_length * (4.0 / 3.0 - self.pole_mass * cos ** 2 / total_mass))
        x_acc = temp - pole_moment * theta_acc * cos / total_mass
        tau = self.seconds_per_step
        self.state = np.array([x + tau * x_dot, x_dot + tau * x_acc, theta + tau * theta_dot,
                               theta_dot + tau * theta_acc])
        self.steps += 1
        self.steps_taken += 1
        terminated = bool(abs(self.state[0]) > self.max_position or abs(self.state[2]) > self.max_angle)
        truncated = self.steps >= self.max_steps
        return self.state.astype(np.float32), 1.0, terminated, truncated, {}


def make(name: str, render_mode=None) -> CartPole:
    """`gym.make('CartPole-v1', render_mode=...)`."""
    assert name == "CartPole-v1", name
    return CartPole()
