"""JointLimit: joint limits that behave like real joints, limb IK and SDEF/Bezier skinning.

The Blender glue is imported inside ``register()`` so that ``core`` (pure numpy) stays importable
without ``bpy`` — for tests, batch tools and other programs.
"""


def register():
    from . import registration

    registration.register()


def unregister():
    from . import registration

    registration.unregister()
