"""How counts read in messages (no Blender here: the batch command line uses it too)."""


def counted(n, noun, nouns=None):
    """``n`` and ``noun`` in the number it takes: ``"1 bone"``, ``"3 bones"`` (``nouns``: the
    plural when it is not ``noun`` + "s")."""
    return f"{n} {noun if n == 1 else nouns or noun + 's'}"
