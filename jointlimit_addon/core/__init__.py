"""Pure-numpy mathematics of JointLimit.

Nothing in this package imports ``bpy``: it is importable and testable on its own.
Conventions (see SPEC §1): quaternions are ``(w, x, y, z)`` arrays of shape ``(..., 4)``,
a bone's long axis is its local +Y.
"""
