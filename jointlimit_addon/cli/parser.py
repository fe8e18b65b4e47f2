"""The command line: commands, their options and the help text. No Blender work happens here."""

import argparse

from ..core import skinning
from .common import PROG, UsageError
from .targets import check_frame

DEFAULT_WAIT = 10.0

EPILOG = """\
files:
  FILE.blend arguments after the command's options (or the file Blender opened before -c). Several
  files run in parallel worker processes (--jobs N, default 1), each started with the same Blender
  ($JOINTLIMIT_BLENDER, set by the embedded launcher, or bpy.app.binary_path) and the same add-on;
  each file's result is reported, a worker that dies is that file's failure, and any failure makes
  the exit code non-zero. Two inputs that would be saved to the same file are refused before any work.

saving:
  After success the result is written over the input, or to --output PATH / --output-dir DIR;
  --no-save is a dry run; nothing is written when a command fails; 'info' never saves. The result
  goes to a temporary file beside the target, which is read back with Blender's blend-file reader
  before it replaces the target (os.replace); if it cannot be written completely (e.g. no space left
  on device) the target stays byte-identical and the run exits 1. A lock file beside the target
  (an OS lock, released on exit or crash) keeps two runs from writing one file at once: the second
  waits up to --wait seconds, then exits 2. If the target changed on disk while this run worked,
  nothing is replaced: this run's result is kept as NAME.jointlimit-conflict-PID.blend, exit 1.
  Temporary files left by a killed run are removed by the next run on that file.

the add-on:
  The command runs inside the installed extension (blender -c jointlimit); it never installs,
  enables or writes anything in Blender's user configuration.

angles are in degrees; frames are whole numbers inside Blender's frame range.
exit codes: 0 success, 1 runtime failure, 2 usage or bad input (one line on stderr).
"""


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(f"{message} (see '{self.prog} --help')")


def frame_number(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid frame number: {text!r}") from None
    try:
        return check_frame(value)     # argparse says "argument --frames: ..."
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def frame_range(parser):
    parser.add_argument("--frames", nargs=2, type=frame_number, metavar=("START", "END"),
                        help="frame range (default: the scene's)")


def armature_option(parser):
    parser.add_argument("--armature", help="armature object (default: the active or the only armature)")


def bones_option(parser, what):
    parser.add_argument("--bones", type=name_list, metavar="A,B,...",
                        help=f"comma-separated bone names (default: {what})")


def mesh_option(parser):
    parser.add_argument("--mesh", type=name_list, metavar="A,B,...",
                        help="comma-separated mesh objects (default: every mesh with an Armature modifier)")


def name_list(text):
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError("expected one or more comma-separated names")
    return names


def whole_number_in(low, high=None):
    """An argument type: a whole number from ``low`` (to ``high``: the operator's own range;
    argparse says which option)."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid whole number: {text!r}") from None
        if high is None and value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        if high is not None and not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be from {low} to {high}, got {value}")
        return value
    return parse


positive_int = whole_number_in(1)


def padding(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number: {text!r}") from None
    if not 0.0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number of 0 or more, got {text}")
    return value


def blend_value(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number: {text!r}") from None
    try:
        return skinning.check_blend(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def seconds(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number of seconds: {text!r}") from None
    if not 0 <= value <= 1e6:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1000000, got {text}")
    return value


def ik_options(parser, tip):
    armature_option(parser)
    parser.add_argument("--bone", required=True, help=tip)
    parser.add_argument("--targets", required=True, metavar="FILE",
                        help="JSON (list of objects) or CSV (header row) with one target per frame")
    parser.add_argument("--space", choices=("armature", "world"), default="armature",
                        help="space of the target positions (default: armature)")
    parser.add_argument("--no-limits", action="store_true", help="ignore the bones' joint limits")


def add_apply(p):
    armature_option(p)
    bones_option(p, "every limited bone")


def add_bake(p):
    armature_option(p)
    bones_option(p, "every limited bone")
    frame_range(p)


def add_convert(p):
    armature_option(p)
    bones_option(p, "every bone")
    p.add_argument("--source", choices=("auto", "limit-rotation", "ik-limits"), default="auto",
                   help="Limit Rotation constraints (local space) or IK limits; auto: the constraint if "
                        "there is one (default: auto)")
    p.add_argument("--old-constraints", choices=("keep", "mute", "remove"), default="mute",
                   help="what happens to converted constraints (default: mute)")
    p.add_argument("--limit-kind", choices=("swing-twist", "euler"), default="swing-twist",
                   help="what a Limit Rotation constraint becomes: a swing-twist rectangle of its ranges, or Euler ranges "
                        "in its order, the region it allows (default: swing-twist)")
    p.add_argument("--replace-limits", action="store_true",
                   help="also convert bones that have a joint limit already, replacing it (default: they keep theirs)")


def add_to_constraints(p):
    armature_option(p)
    bones_option(p, "every limited bone")
    p.add_argument("--disable-limits", action="store_true", help="turn the converted joint limits off")


def add_limb_ik(p):
    ik_options(p, "the end bone (hand/foot) of three bones that follow each other (rig machinery between them skipped)")
    p.add_argument("--hinge-axis", choices=("AUTO", "X", "NEG_X", "Z", "NEG_Z"), default="AUTO",
                   help="axis of the middle joint (default: the middle bone's Hinge limit axis if it has one, else the "
                        "axis its Lock Rotation leaves free, else from the rest bend)")


def add_ccd(p):
    ik_options(p, "the tip bone of the chain")
    p.add_argument("--chain-length", type=int, default=0, help="bones in the chain (default 0: up to the root)")
    p.add_argument("--iterations", type=whole_number_in(1, 10000), default=1000,
                   help="most CCD sweeps, 1 to 10000 (default 1000)")


def add_motion(p):
    armature_option(p)
    bones_option(p, "every bone with two or more rotation keys")
    frame_range(p)
    p.add_argument("--profile", choices=("min-acceleration", "min-jerk"), default="min-acceleration",
                   help="what the motion minimises (default: min-acceleration)")
    p.add_argument("--channels", choices=("swing-twist", "euler"), default="swing-twist",
                   help="interpolated numbers (default: swing-twist)")
    p.add_argument("--step", type=whole_number_in(1, 100), default=1, help="key every Nth frame, 1 to 100 (default 1)")
    p.add_argument("--no-via-points", action="store_true", help="stop at every key between the ends")
    p.add_argument("--via-velocity", choices=("clamped", "optimal"), default="clamped",
                   help="clamped: never overshoot the keys around a via point (default); optimal: the exact "
                        "minimum of the profile, which can swing far past unevenly spaced keys")


MODES = ("lbs", "sbs", "sdef", "bezier")
SOURCES = ("auto", "mmd", "derived")


def add_deformer_add(p, mode_default="sdef", mode_help="sdef", blend_default=0.5, blend_help="0.5"):
    mesh_option(p)
    p.add_argument("--mode", choices=MODES, default=mode_default,
                   help=f"skinning of two-bone vertices (default: {mode_help})")
    p.add_argument("--source", choices=SOURCES, default="auto", help="where C, R0, R1 come from (default: auto)")
    p.add_argument("--blend", type=blend_value, default=blend_default,
                   help=f"SDEF blend s in [0, 1] (default {blend_help})")


def add_deformer_add_command(p):
    add_deformer_add(p)
    p.add_argument("--take-over", action="store_true",
                   help="unbind mmd_tools' own SDEF of a mesh bound by it while the deformer is on "
                        "(deformer-remove gives it back)")
    p.add_argument("--strongest-two", action="store_true",
                   help="vertices with three or more groups use their two strongest, renormalised "
                        "(otherwise they follow the Armature modifier)")


def add_deformer_bake(p):
    add_deformer_add(p, None, "the mesh's deformer's, else sdef", None, "the mesh's deformer's, else 0.5")
    p.add_argument("--strongest-two", action="store_true",
                   help="vertices with three or more groups use their two strongest (default: as the mesh's "
                        "deformer does, else not)")
    frame_range(p)
    p.add_argument("--as", dest="bake_as", choices=("shape-keys", "meshes"), default="shape-keys",
                   help="one shape key or one mesh per frame (default: shape-keys)")
    p.add_argument("--mute-modifiers", action="store_true",
                   help="turn off the Armature modifier, the deformer and the modifiers before them (the baked keys "
                        "hold their work) and mute the other shape keys; modifiers after the deformer stay on")


def add_sdef_derive(p):
    mesh_option(p)
    p.add_argument("--centre", choices=("project", "joint"), default="project", help="rotation centre C")
    p.add_argument("--boundary", choices=("fit", "extent"), default="fit", help="how R0, R1 are found")
    p.add_argument("--pad", type=padding, default=0.0, help="widen the blend zone by this fraction")
    p.add_argument("--write-mmd", action="store_true",
                   help="also write them as mmd_tools SDEF shape keys (mmd_sdef_c, mmd_sdef_r0, mmd_sdef_r1)")
    p.add_argument("--strongest-two", action="store_true",
                   help="also derive them for vertices with three or more groups, on their two strongest (as "
                        "deformer-add --strongest-two uses them)")


def add_info(p):
    armature_option(p)
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")


# name: (help, options, saves); the work of each is in runner.RUNS
COMMANDS = {
    "info": ("print the rig's joint limits and deformers", add_info, False),
    "apply": ("clamp the current pose to the joint limits", add_apply, True),
    "bake": ("key the clamped rotation of limited bones on every frame", add_bake, True),
    "convert": ("Limit Rotation constraints / IK limits -> joint limits", add_convert, True),
    "to-constraints": ("joint limits -> Limit Rotation constraints", add_to_constraints, True),
    "limb-ik": ("analytic limb IK to targets from a file, keyed per frame", add_limb_ik, True),
    "ccd": ("CCD IK of a chain to targets from a file, keyed per frame", add_ccd, True),
    "motion": ("smooth, limit-respecting motion between key poses", add_motion, True),
    "deformer-add": ("add the SDEF/SBS/Bezier deformer to meshes", add_deformer_add_command, True),
    "deformer-remove": ("remove the deformer (and give a taken-over mmd_tools SDEF binding back)", mesh_option,
                        True),
    "deformer-bake": ("bake the deformer per frame (shape keys or meshes)", add_deformer_bake, True),
    "sdef-derive": ("derive SDEF parameters C, R0, R1 for meshes", add_sdef_derive, True),
}


def build_parser(prog=PROG):
    parser = Parser(prog=prog, description="Run JointLimit operators on .blend files, headless.",
                    epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", metavar="<command>", required=True)
    for name, (help_text, add, saves) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text, epilog=EPILOG,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        add(p)
        p.add_argument("files", nargs="*", metavar="FILE.blend",
                       help="files to process (default: the file Blender opened)")
        p.add_argument("--jobs", type=positive_int, default=1, help="parallel worker processes (default 1)")
        p.add_argument("--report", metavar="FILE.json", help="write a JSON report of every file (see the README)")
        p.add_argument("--worker-file", help=argparse.SUPPRESS)
        p.add_argument("--worker-report", help=argparse.SUPPRESS)
        p.add_argument("--worker-run", help=argparse.SUPPRESS)
        if saves:
            p.add_argument("--wait", type=seconds, default=DEFAULT_WAIT, metavar="SECONDS",
                           help="how long to wait for another run writing the same file "
                                f"(default {DEFAULT_WAIT:g})")
            out = p.add_mutually_exclusive_group()
            out.add_argument("--output", metavar="PATH", help="write the result here (one input file only)")
            out.add_argument("--output-dir", metavar="DIR", help="write DIR/<input name> instead")
            out.add_argument("--no-save", action="store_true", help="dry run: change nothing on disk")
    return parser


def parse(argv, prog=PROG):
    """The parsed arguments; ``UsageError`` for anything argparse refuses."""
    return build_parser(prog).parse_args(argv)


def _as_text(parser):
    """``parser`` (and its commands' parsers) taking every option's value as text, no option
    required, and options that exclude each other together."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _as_text(sub)
        elif action.option_strings:
            action.type, action.choices, action.required = None, None, False
    parser._mutually_exclusive_groups.clear()
    return parser


def _asks_help(word):
    """``-h``, ``--help`` or an abbreviation argparse takes for it (``--he``)."""
    return word == "-h" or (len(word) > 2 and "--help".startswith(word))


def parse_refused(argv, prog=PROG):
    """What can be told of a command line ``parse`` refused, for its ``--report``: the arguments
    but the ones not understood (an unknown option), read as text where a value was refused (a bad
    number, choice, or options that exclude each other, so that the files are still known), or
    else only the command and the report's path (files none); ``None`` when not even ``--report``
    can be read."""
    for parser, words in ((build_parser(prog), argv), (_as_text(build_parser(prog)), [w for w in argv if not _asks_help(w)])):
        try:    # (help asked after a refused value: the refusal stands, no help and exit 0)
            return parser.parse_known_args(words)[0]
        except UsageError:
            pass
    reading = Parser(prog=prog, add_help=False)
    reading.add_argument("--report")
    try:
        report = reading.parse_known_args(argv)[0].report
    except UsageError:
        return None
    if report is None:
        return None
    command = argv[0] if argv and argv[0] in COMMANDS else None
    return argparse.Namespace(command=command, report=report, worker_file=None, files=[])
