"""A handler that answers nothing; the test reads the folder's serving.properties."""


def handle(_inputs):
    """Answers every request with no content (204)."""
    return None
