"""The policies' one exception."""


class NotFittedError(RuntimeError):
    """A model, estimator or scorer was used before it learned what it needs."""
