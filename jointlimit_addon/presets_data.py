"""Built-in joint-limit presets: typical human ranges of motion, in degrees, for the LEFT side,
and the carpus and hock of four-legged animals.

Sources: the usual clinical range-of-motion tables (American Academy of Orthopaedic Surgeons,
*Joint Motion: Method of Measuring and Recording*, 1965, and Norkin & White, *Measurement of Joint
Motion*), rounded; spine and neck totals split over the bones of a typical rig. The carpus and
hock: goniometry of Labrador Retrievers (Jaegger, Marcellin-Little & Levine, *Reliability of
goniometry in Labrador Retrievers*, Am J Vet Res 63, 2002: joint angles at full flexion and
extension, 180 straight), as hinges counted from the limb straight; the four-legged chains take
the human shoulder, elbow, hip and knee for the other joints (looser than an animal's shoulder
and hip). Ranges are from
the anatomical neutral pose, so a rig's rest pose should be close to it (arms hanging for the
shoulder; for a T-pose rig lower Swing Z of the shoulder by about 90°).

Blender axes (SPEC §1): the bone lies along local +Y; ``swing_x`` bends about local X, ``swing_z``
about local Z, ``twist`` turns about Y. Convention of the table: flexion (the forward bend of
spine and neck, lifting the arm or thigh forward, closing elbow, knee, fingers and toes,
dorsiflexion of the ankle) is a POSITIVE rotation about local X; abduction (away from the body's
midline) is positive about local Z on the left side. Rigs whose bone rolls differ can flip the X
sign when applying (*Flip Flexion*). Right-side bones get the mirrored ranges (Z and twist
negated and swapped, as ``pose.jointlimit_mirror`` does). Where the sign of a twist depends on
the roll, the range is symmetric.

Smooth shapes with uneven ranges use ``"fit": "AXES"``: the outline reaches every range of the
table and holds the rest pose (the paper's inscribed fit would not).

Each entry: ``label``, ``description`` and the fields ``presets.write_entry`` understands.
"""

JOINTS = {
    "NECK": {
        "label": "Neck",
        "description": "Cervical spine on one neck bone: flexion 45, extension 45, side bend 45, rotation 70",
        "kind": "SWING_TWIST", "shape": "OVAL",
        "swing_x": (-45, 45), "swing_z": (-45, 45), "twist": (-70, 70),
    },
    "SPINE": {
        "label": "Spine Segment",
        "description": "One of three spine bones: thoracolumbar flexion 80, extension 25, side bend 35, "
                       "rotation 45 shared out",
        "kind": "SWING_TWIST", "shape": "RECT",
        "swing_x": (-10, 30), "swing_z": (-12, 12), "twist": (-15, 15),
    },
    "SHOULDER": {
        "label": "Shoulder",
        "description": "Upper arm (ball joint): flexion 170, extension 60, abduction 170, adduction 30, "
                       "rotation 80",
        "kind": "SWING_TWIST", "shape": "OVAL", "fit": "AXES",
        "swing_x": (-60, 170), "swing_z": (-30, 170), "twist": (-80, 80),
    },
    "ELBOW": {
        "label": "Elbow (Hinge)",
        "description": "Forearm bending about local X: 0 to 145 of flexion",
        "kind": "HINGE", "hinge_axis": "X", "hinge": (0, 145),
    },
    "FOREARM_TWIST": {
        "label": "Forearm Twist",
        "description": "Forearm twist bone: pronation and supination 80 each, no bending",
        "kind": "SWING_TWIST", "shape": "RECT",
        "swing_x": (-1, 1), "swing_z": (-1, 1), "twist": (-80, 80),
    },
    "WRIST": {
        "label": "Wrist",
        "description": "Hand: flexion 80, extension 70, radial deviation 20, ulnar deviation 30, no twist "
                       "(that is the forearm's)",
        "kind": "SWING_TWIST", "shape": "OVAL", "fit": "AXES",
        "swing_x": (-70, 80), "swing_z": (-30, 20), "fix_twist": True,
    },
    "HIP": {
        "label": "Hip",
        "description": "Thigh (ball joint): flexion 120, extension 30, abduction 45, adduction 30, rotation 45",
        "kind": "SWING_TWIST", "shape": "OVAL", "fit": "AXES",
        "swing_x": (-30, 120), "swing_z": (-30, 45), "twist": (-45, 45),
    },
    "KNEE": {
        "label": "Knee (Hinge)",
        "description": "Shin bending about local X: 0 to 140 of flexion",
        "kind": "HINGE", "hinge_axis": "X", "hinge": (0, 140),
    },
    "ANKLE": {
        "label": "Ankle",
        "description": "Foot: dorsiflexion 20, plantar flexion 50, inversion and eversion 25 as twist",
        "kind": "SWING_TWIST", "shape": "OVAL", "fit": "AXES",
        "swing_x": (-50, 20), "swing_z": (-10, 10), "twist": (-25, 25),
    },
    "TOE": {
        "label": "Toe",
        "description": "Toe base: flexion 40, extension 70, little sideways motion",
        "kind": "SWING_TWIST", "shape": "RECT",
        "swing_x": (-70, 40), "swing_z": (-10, 10), "fix_twist": True,
    },
    "CARPUS": {
        "label": "Carpus (Hinge)",
        "description": "Four-legged forefoot bending backward about local X: 16 past straight to 148 of flexion "
                       "(a dog's carpus, 196 to 32 degrees)",
        "kind": "HINGE", "hinge_axis": "X", "hinge": (-16, 148),
    },
    "HOCK": {
        "label": "Hock (Hinge)",
        "description": "Four-legged hind foot (or a bird's backward 'knee') bending forward about local X: from 15 "
                       "short of straight to 142 of flexion (a dog's tarsus, 165 to 38 degrees)",
        "kind": "HINGE", "hinge_axis": "X", "hinge": (15, 142),
    },
    "FINGER_BASE": {
        "label": "Finger Base (MCP)",
        "description": "First finger joint: flexion 90, extension 30, spreading 20 each way",
        "kind": "SWING_TWIST", "shape": "OVAL", "fit": "AXES",
        "swing_x": (-30, 90), "swing_z": (-20, 20), "fix_twist": True,
    },
    "FINGER_MIDDLE": {
        "label": "Finger Middle (PIP)",
        "description": "Middle finger joint, a hinge: 0 to 100 of flexion",
        "kind": "HINGE", "hinge_axis": "X", "hinge": (0, 100),
    },
    "FINGER_TIP": {
        "label": "Finger Tip (DIP)",
        "description": "Last finger joint, a hinge: 0 to 80 of flexion",
        "kind": "HINGE", "hinge_axis": "X", "hinge": (0, 80),
    },
}

# Chains: the selected bones are split into logical chains (``chains``); each chain's bones get
# these joints from its root down (a shorter chain only where its bone names say which joints).
CHAINS = {
    "ARM": {
        "label": "Arm (Shoulder, Elbow, Wrist)",
        "description": "Select upper arm, forearm and hand (of one or both arms): shoulder, elbow hinge, wrist",
        "joints": ("SHOULDER", "ELBOW", "WRIST"),
    },
    "ARM_TWIST": {
        "label": "Arm with Twist Bone",
        "description": "Select upper arm, forearm, forearm twist bone and hand: shoulder, elbow hinge, "
                       "forearm twist, wrist",
        "joints": ("SHOULDER", "ELBOW", "FOREARM_TWIST", "WRIST"),
    },
    "LEG": {
        "label": "Leg (Hip, Knee, Ankle, Toe)",
        "description": "Select thigh, shin, foot and toe (of one or both legs): hip, knee hinge, ankle, toe",
        "joints": ("HIP", "KNEE", "ANKLE", "TOE"),
    },
    "FRONT_LEG": {
        "label": "Front Leg, Four-Legged (Shoulder, Elbow, Carpus)",
        "description": "Select upper arm, forearm and forefoot of a four-legged rig's front legs: shoulder, elbow "
                       "hinge, carpus hinge",
        "joints": ("SHOULDER", "ELBOW", "CARPUS"),
    },
    "HIND_LEG": {
        "label": "Hind Leg, Four-Legged (Hip, Knee, Hock)",
        "description": "Select thigh, shin and hind foot of a four-legged rig's hind legs: hip, knee hinge, hock hinge",
        "joints": ("HIP", "KNEE", "HOCK"),
    },
    "FINGER": {
        "label": "Fingers (Base, Middle, Tip)",
        "description": "Select the three bones of one or more fingers: base joint, middle and tip hinges",
        "joints": ("FINGER_BASE", "FINGER_MIDDLE", "FINGER_TIP"),
    },
    "SPINE": {
        "label": "Spine and Neck",
        "description": "Select the spine bones from the hips up: three spine segments, then the neck",
        "joints": ("SPINE", "SPINE", "SPINE", "NECK"),
    },
}
