"""Japanese (``ja_JP``) user interface, registered with ``bpy.app.translations``.

``MESSAGES`` maps English text (whitespace collapsed) to Japanese. ``build_dictionary`` turns it
into Blender's ``{locale: {(context, msgid): text}}``: every message in the default context ``*``
(property names and descriptions, enum items, panel and menu labels, layout texts, tooltips,
reports) and the operators' labels also in ``Operator`` (``contexts.operator_default``), where
Blender looks up operator names. Operator tooltips come from docstrings, which Blender keeps
verbatim (line breaks and indentation included), so those exact strings are added as msgids too.

Reports: Blender translates the text given to ``Operator.report`` (as a report message), so
fixed report strings are covered by this table. Messages built with f-strings cannot match a
msgid; the preset operators translate their templates with ``pgettext_rpt`` before formatting,
the older operators' formatted reports and error texts from the core stay in English.
"""

import bpy

LOCALE = "ja_JP"

MESSAGES = {
    # --- panels, menus, layout texts -------------------------------------------------------------
    "Joint Limit": "関節制限",
    "Joint Limits": "関節制限",
    "JointLimit": "JointLimit",
    "Joint Limit Presets": "関節制限プリセット",
    "JointLimit Deformer": "JointLimit デフォーマー",
    "No active bone": "アクティブなボーンがありません",
    "Not kept on reopening: the library file stores no limits": "開き直すと残りません：ライブラリファイルに制限が保存されていません",
    "(saved without JointLimit): open and save it with JointLimit": "（JointLimit なしで保存）：JointLimit を入れて開いて保存してください",
    "Inside the limit": "制限の内側",
    "Outside the limit": "制限の外側",
    "twist {twist}": "ひねり {twist}",
    "Outline ({count} vertices)": "輪郭（頂点 {count} 個）",
    "Max": "最大",
    "Z": "Z",
    "X": "X",
    "-X": "-X",
    "-Z": "-Z",
    "Active": "アクティブ",
    "Outline from Ranges": "範囲から輪郭を作成",
    "Joints": "関節",
    "Chains": "チェーン",
    "User Presets": "ユーザープリセット",
    # --- per-bone settings -------------------------------------------------------------------------
    "JointLimit settings of this bone": "このボーンの JointLimit 設定",
    "Scene-wide JointLimit options": "シーン全体の JointLimit オプション",
    "Enabled": "有効",
    "Limit this bone's rotation": "このボーンの回転を制限します",
    "Kind": "種類",
    "How the rotation is limited": "回転を制限する方式",
    "Swing & Twist": "スイングとひねり",
    "Swing limited on the stereographic (s, t) plane, twist about the bone":
        "立体射影の (s, t) 平面上でスイングを制限し、ボーン軸まわりのひねりも制限します",
    "Hinge": "ヒンジ",
    "One axis only (local X or Z: Hinge Axis), like an elbow or a knee": "肘や膝のように 1 軸（ローカル X または Z：ヒンジ軸）だけで曲がります",
    "Euler": "オイラー",
    "Conventional per-axis Euler limits, with a gimbal guard on the middle axis":
        "従来の軸ごとのオイラー角制限（中間軸にジンバルロック防止の上限付き）",
    "Euler (Equivalent Ranges)": "オイラー（等価な範囲）",
    "Euler limits that accept any equivalent Euler triple": "等価なオイラー角の組のどれでも受け入れるオイラー角制限",
    "Quaternion Swing": "クォータニオン・スイング",
    "Limit on the swing quaternion's components": "スイング・クォータニオンの成分による制限",
    "Shape": "形状",
    "Shape of the allowed swing region": "スイングの可動領域の形",
    "Rectangle": "矩形",
    "Rectangle on the (s, t) plane": "(s, t) 平面上の矩形",
    "Ellipse": "楕円",
    "Ellipse fitted to the swing ranges (see Fit)": "スイング範囲に合わせた楕円（フィットを参照）",
    "Oval": "長円",
    "Stadium: two half circles joined by straight edges": "2 つの半円を直線でつないだ長円（トラック形）",
    "Superellipse": "超楕円",
    "Between the ellipse and the rectangle, set by the exponents": "楕円と矩形の中間の形（指数で調整）",
    "Polygon": "多角形",
    "Outline of straight segments and circular arcs": "線分と円弧からなる輪郭",
    "Fit": "フィット",
    "How an Ellipse, Oval or Superellipse meets the swing ranges": "楕円・長円・超楕円をスイング範囲にどう合わせるか",
    "Inscribed": "内接",
    "The paper's fit: the shape inside the rectangle of the ranges (with uneven ranges it misses the limits you "
    "typed and can leave out the rest pose)":
        "論文の合わせ方：範囲の矩形に内接する形（範囲が非対称だと入力した制限値に届かず、レストポーズが外れることもあります）",
    "Axes": "軸",
    "Each quarter has its own half-axes: the outline passes through all four axis limits and always holds the "
    "rest pose (ranges must contain 0°)":
        "象限ごとに半径を持つ形：輪郭が 4 つの軸の制限値を必ず通り、常にレストポーズを含みます（範囲は 0° を含む必要があります）",
    "The rest pose is outside this limit: it will be moved {angle}° by Apply":
        "レストポーズがこの制限の外にあります：適用すると {angle}° 動きます",
    "Bone '{bone}': {warning}": "ボーン '{bone}'：{warning}",
    "({count} more bones like this)": "（同様のボーンがほかに {count} 本）",
    "(1 more bone like this)": "（同様のボーンがほかに 1 本）",
    "(skipped 1 rig mechanism bone: {names})": "（リグの機構ボーン 1 本を除外：{names}）",
    "(skipped {count} rig mechanism bones: {names})": "（リグの機構ボーン {count} 本を除外：{names}）",
    "the mesh follows the limb's IK controls ({bone}'s IK_FK is {value:.2f}): set it to 1 for the FK chain to "
    "move it": "メッシュは手足の IK コントローラーに従っています（{bone} の IK_FK が {value:.2f}）：FK チェーンで動かすには 1 にしてください",
    "Correction": "補正",
    "How a rotation outside the limit is brought back": "制限の外に出た回転の戻し方",
    "Optimal": "最適",
    "Nearest allowed direction on the sphere (geodesic)": "球面上で最も近い許容方向（測地線距離）",
    "Simple": "簡易",
    "The paper's cheap correction on the plane (can jump for wide ranges)":
        "論文の平面上での簡易補正（範囲が広いと飛ぶことがあります）",
    "Swing X Min": "スイング X 最小",
    "Smallest bend about the bone's local X axis": "ボーンのローカル X 軸まわりの曲げの最小値",
    "Swing X Max": "スイング X 最大",
    "Largest bend about the bone's local X axis": "ボーンのローカル X 軸まわりの曲げの最大値",
    "Swing Z Min": "スイング Z 最小",
    "Smallest bend about the bone's local Z axis": "ボーンのローカル Z 軸まわりの曲げの最小値",
    "Swing Z Max": "スイング Z 最大",
    "Largest bend about the bone's local Z axis": "ボーンのローカル Z 軸まわりの曲げの最大値",
    "Exponent": "指数",
    "Superellipse exponents (m for s, n for t); 2 is an ellipse, large values approach the rectangle":
        "超楕円の指数（s に m、t に n）。2 で楕円、大きいほど矩形に近づきます",
    "Limit Twist": "ひねりを制限",
    "Limit the twist about the bone's own axis": "ボーン自身の軸まわりのひねりを制限します",
    "Twist Min": "ひねり最小",
    "Smallest twist about the bone's local Y axis": "ボーンのローカル Y 軸まわりのひねりの最小値",
    "Twist Max": "ひねり最大",
    "Largest twist about the bone's local Y axis": "ボーンのローカル Y 軸まわりのひねりの最大値",
    "Fix Twist": "ひねりを固定",
    "Keep the twist at zero": "ひねりを常に 0 に保ちます",
    "Hinge Axis": "ヒンジ軸",
    "Local axis of a hinge joint": "ヒンジ関節のローカル軸",
    "Bend about local X": "ローカル X 軸まわりに曲げます",
    "Bend about local Z": "ローカル Z 軸まわりに曲げます",
    "Hinge Min": "ヒンジ最小",
    "Smallest hinge angle about the Hinge Axis": "ヒンジ軸まわりのヒンジ角の最小値",
    "Hinge Max": "ヒンジ最大",
    "Largest hinge angle about the Hinge Axis": "ヒンジ軸まわりのヒンジ角の最大値",
    "Euler Order": "オイラー角の順序",
    "Order of the Euler angles": "オイラー角の回転順序",
    "XYZ": "XYZ",
    "XZY": "XZY",
    "YXZ": "YXZ",
    "YZX": "YZX",
    "ZXY": "ZXY",
    "ZYX": "ZYX",
    "Euler order XYZ": "オイラー角の順序 XYZ",
    "Euler order XZY": "オイラー角の順序 XZY",
    "Euler order YXZ": "オイラー角の順序 YXZ",
    "Euler order YZX": "オイラー角の順序 YZX",
    "Euler order ZXY": "オイラー角の順序 ZXY",
    "Euler order ZYX": "オイラー角の順序 ZYX",
    "Euler Min": "オイラー角最小",
    "Smallest Euler angles (X, Y, Z)": "オイラー角の最小値（X, Y, Z）",
    "Euler Max": "オイラー角最大",
    "Largest Euler angles (X, Y, Z)": "オイラー角の最大値（X, Y, Z）",
    "Outline": "輪郭",
    "Vertices of the POLYGON outline, in order": "多角形の輪郭の頂点（順番どおり）",
    "Active Outline Vertex": "アクティブな輪郭頂点",
    "Selected outline vertex": "選択中の輪郭頂点",
    "Swing Max": "スイング最大",
    "Largest swing angle of the quaternion-swing cone": "クォータニオン・スイングの円錐の最大スイング角",
    "Swing Z": "スイング Z",
    "Bend about local Z at this outline vertex (sets s)": "この輪郭頂点でのローカル Z 軸まわりの曲げ（s を決めます）",
    "Swing X": "スイング X",
    "Bend about local X at this outline vertex (sets t)": "この輪郭頂点でのローカル X 軸まわりの曲げ（t を決めます）",
    "Bulge": "膨らみ",
    "Arc of the edge to the next vertex: 0 straight, 1 half circle, negative bends the other way":
        "次の頂点までの辺の弧：0 で直線、1 で半円、負の値で反対側に曲がります",
    "Name": "名前",
    # --- scene settings ------------------------------------------------------------------------------
    "Live Limits": "ライブ制限",
    "Keep limited bones inside their limits while you pose them (R, trackball, typed values)":
        "ポーズ中（R、トラックボール、数値入力）も制限付きボーンを制限内に保ちます",
    "Clamp Playback": "再生時に制限",
    "Fast Scrubbing": "高速スクラブ",
    "Outside playback too (scrubbing, stepping frames, a script's frame changes), Blender evaluates the clamped "
    "rotations of rigs animated by their action alone in the frame's one evaluation, as during playback. Off: each "
    "frame is clamped after Blender evaluated it, which makes Blender evaluate it a second time, but also clamps "
    "keyed bones that another add-on's frame handlers turn after Blender evaluated the frame":
        "再生中以外（スクラブ、フレーム送り、スクリプトによるフレーム変更）でも、アクションだけでアニメーションするリグの"
        "制限済みの回転を、再生中と同じくフレームの一回の評価で Blender に評価させます。オフ：各フレームを Blender の評価後に"
        "制限するため Blender がもう一度評価しますが、他のアドオンのフレームハンドラーが評価後に回すキー付きボーンも"
        "制限されます",
    "Clamp limited bones on every frame during playback and rendering (a render clamps the animation of rigs "
    "animated by their action alone; bake the limits of others before rendering). Switching it on also switches "
    "on Render > Lock Interface, without which a render started from the interface cannot be clamped safely":
        "再生とレンダリングの毎フレームで制限付きボーンを制限内に戻します（レンダリングで制限されるのは、アクションだけで"
        "アニメーションするリグです。それ以外のリグはレンダリング前に制限をベイクしてください）。"
        "オンにすると「レンダー > インターフェースをロック」もオンになります。これがオフのままでは、"
        "インターフェースから開始したレンダリングを安全に制限できません",
    "Lock Interface (renders are clamped only with it)": "インターフェースをロック（オンのときだけレンダリングを制限します）",
    "All Limited Bones": "すべての制限付きボーン",
    "Show Limits": "制限を表示",
    "Draw the joint limits in the 3D Viewport in Pose Mode": "ポーズモードで関節制限を 3D ビューポートに表示します",
    "Bones": "ボーン",
    "Which limited bones the viewport overlay draws": "ビューポートのオーバーレイに表示する制限付きボーン",
    "Selected": "選択中",
    "Draw the limits of the selected limited bones": "選択中の制限付きボーンの制限を表示します",
    "All": "すべて",
    "Draw the limits of every limited bone of the armature": "アーマチュアのすべての制限付きボーンの制限を表示します",
    "Cone": "円錐",
    "Fill the cone from the joint to the outline of the allowed swing": "関節からスイング可動域の輪郭までの円錐を塗ります",
    "Twist Arc": "ひねりの弧",
    "Draw the allowed twist as an arc around the bone": "許容されるひねりをボーンのまわりの弧で表示します",
    "Opacity": "不透明度",
    "Opacity of the overlay's cone (lines are drawn more opaque)": "オーバーレイの円錐の不透明度（線はより濃く描かれます）",
    "Size": "サイズ",
    "Radius of the overlay sphere as a multiple of the bone length": "オーバーレイの球の半径（ボーンの長さに対する倍率）",
    # --- operators -------------------------------------------------------------------------------------
    "JointLimit Info": "JointLimit 情報",
    "Print JointLimit's package, its operators and the limited bones of the scene":
        "JointLimit のパッケージ名、オペレーター、シーンの制限付きボーンを表示します",
    "Apply Joint Limits": "関節制限を適用",
    "Clamp the rotation of the selected limited bones to their joint limits": "選択中の制限付きボーンの回転を関節制限内に収めます",
    "Clamp every limited bone an animator poses (rig mechanism bones are skipped), not only the selected ones": "選択中のボーンだけでなく、アニメーターが動かすすべての制限付きボーンを制限内に収めます（リグの機構ボーンは除外）",
    "Bake Joint Limits": "関節制限をベイク",
    "Evaluate the animation over a frame range and key the clamped rotation of the limited bones on every frame":
        "フレーム範囲のアニメーションを評価し、制限内に収めた回転を毎フレームにキーとして挿入します",
    "Start Frame": "開始フレーム",
    "First frame to bake": "ベイクする最初のフレーム",
    "End Frame": "終了フレーム",
    "Last frame to bake": "ベイクする最後のフレーム",
    "Bake every limited bone an animator poses (rig mechanism bones are skipped), not only the selected ones": "選択中のボーンだけでなく、アニメーターが動かすすべての制限付きボーンをベイクします（リグの機構ボーンは除外）",
    "Joint Limits from Constraints": "コンストレイントから関節制限へ",
    "Turn the Limit Rotation constraints or IK limits of the selected bones into joint limits (s = tan(angle/2))":
        "選択中のボーンの回転制限コンストレイントまたは IK 制限を関節制限に変換します（s = tan(角度/2)）",
    "Source": "変換元",
    "Which Blender limits to convert": "変換する Blender の制限",
    "Auto": "自動",
    "Limit Rotation constraint if the bone has one, otherwise its IK limits":
        "回転制限コンストレイントがあればそれを、なければ IK 制限を使います",
    "Limit Rotation": "回転制限",
    "Limit Rotation constraints in local space": "ローカル空間の回転制限コンストレイント",
    "IK Limits": "IK 制限",
    "The bone's IK limits and locks": "ボーンの IK 制限とロック",
    "Old Constraints": "元のコンストレイント",
    "What to do with the converted Limit Rotation constraints": "変換した回転制限コンストレイントの扱い",
    "Keep": "残す",
    "Leave them as they are": "そのまま残します",
    "Mute": "ミュート",
    "Disable them": "無効にします",
    "Remove": "削除",
    "Delete them": "削除します",
    "All Bones": "すべてのボーン",
    "Convert every bone an animator poses (rig mechanism bones are skipped), not only the selected ones": "選択中だけでなく、アニメーターが動かすすべてのボーンを変換します（リグの機構ボーンは除外）",
    "Joint Limits to Constraints": "関節制限からコンストレイントへ",
    "Add Limit Rotation constraints that approximate the joint limits with Euler ranges, for pipelines that need Blender constraints":
        "関節制限をオイラー角の範囲で近似した回転制限コンストレイントを追加します（Blender のコンストレイントが必要な工程向け）",
    "Convert every limited bone an animator poses (rig mechanism bones are skipped), not only the selected ones": "選択中だけでなく、アニメーターが動かすすべての制限付きボーンを変換します（リグの機構ボーンは除外）",
    "Disable Joint Limits": "関節制限を無効化",
    "Turn off the converted joint limits": "変換した関節制限をオフにします",
    "Copy Joint Limit to Selected": "関節制限を選択ボーンにコピー",
    "Copy the active bone's joint-limit settings to the other selected bones": "アクティブなボーンの関節制限の設定を他の選択ボーンにコピーします",
    "Mirror Joint Limits": "関節制限をミラー",
    "Copy the selected bones' joint limits to their mirror bones (.L/.R, _L/_R, Left/Right) with the signs mirrored across X":
        "選択ボーンの関節制限を反対側のボーン（.L/.R、_L/_R、Left/Right）に X 軸で符号を反転してコピーします",
    "Edit Polygon Outline": "多角形の輪郭を編集",
    "Add or remove vertices of the active bone's polygon outline": "アクティブなボーンの多角形の輪郭に頂点を追加・削除します",
    "Action": "操作",
    "What to do with the outline": "輪郭に対して行う操作",
    "Add Vertex": "頂点を追加",
    "Add a vertex after the active one": "アクティブな頂点の後に頂点を追加します",
    "Remove Vertex": "頂点を削除",
    "Remove the active vertex": "アクティブな頂点を削除します",
    "From Ranges": "範囲から",
    "Replace the outline by the rectangle of the swing ranges": "輪郭をスイング範囲の矩形で置き換えます",
    "Apply Joint Limit Preset": "関節制限プリセットを適用",
    "Set the selected bones' joint limits from a preset (right-side bones get the mirrored ranges)":
        "プリセットから選択ボーンの関節制限を設定します（右側のボーンにはミラーした範囲を設定）",
    "Preset": "プリセット",
    "JOINT:<key> or CHAIN:<key> of the built-in table, or USER:<name> of a saved preset":
        "組み込み表の JOINT:<キー> または CHAIN:<キー>、保存したプリセットの USER:<名前>",
    "Mirror Right Side": "右側をミラー",
    "Give right-side bones (.R, _R, Right) the mirrored ranges of the left-side preset":
        "右側のボーン（.R、_R、Right）には左側用プリセットをミラーした範囲を設定します",
    "Flip Flexion": "屈曲を反転",
    "Reverse the bend about local X, for rigs whose bones bend the other way round X":
        "ローカル X 軸まわりの曲げの向きを反転します（X 軸の向きが逆のリグ向け）",
    "Fit to Rig": "リグに合わせる",
    "Put flexion and abduction on the local axes that bend each bone that way in this rig (from its rest pose: "
    "character front, bone roll, T- or A-pose) instead of local X and Z":
        "屈曲と外転を、ローカル X・Z ではなく、このリグで各ボーンを実際にその向きへ曲げるローカル軸に設定します"
        "（レストポーズから判定：キャラクターの正面、ボーンのロール、T ポーズ／A ポーズ）",
    "Front": "正面",
    "Which way the character faces, in armature space (across Up)": "キャラクターが向いている方向（アーマチュア空間、上方向に垂直）",
    "Up": "上方向",
    "+Z Up": "+Z が上",
    "-Z Up": "-Z が上",
    "+Y Up": "+Y が上",
    "-Y Up": "-Y が上",
    "+X Up": "+X が上",
    "-X Up": "-X が上",
    "Warn About Animated Bones": "アニメーションされたボーンを警告",
    "Warn when clamped bones are animated (their keys or drivers set the rotation again on the next frame change) "
    "and say what to do in the interface; the batch command says it in its own terms":
        "制限したボーンがアニメーションされている場合（次のフレーム変更でキーやドライバーが回転を戻します）に警告し、"
        "インターフェースでの対処を示します。バッチコマンドは独自の表現で伝えます",
    "Which way is up for the character, in armature space (a Y-up import has its armature data Y-up and its object "
    "turned)": "キャラクターの上方向（アーマチュア空間。Y アップで読み込んだリグはアーマチュアデータが Y アップで、オブジェクトが回転しています）",
    "From the rig: the axis its legs (two or four) run against at rest, else +Z":
        "リグから判定：レスト時に脚（2 本でも 4 本でも）が伸びる向きと反対の軸、なければ +Z",
    "Up is +Z (Blender's convention)": "上方向は +Z（Blender の慣例）",
    "Up is +Y (a Y-up import, e.g. Mixamo's FBX)": "上方向は +Y（Y アップの読み込み、例：Mixamo の FBX）",
    "Up is -Y": "上方向は -Y",
    "Up is -Z": "上方向は -Z",
    "Up is +X": "上方向は +X",
    "Up is -X": "上方向は -X",
    "Toward +Z": "+Z 方向",
    "Toward -Z": "-Z 方向",
    "The character faces +Z (a Y-up import)": "キャラクターは +Z を向いています（Y アップの読み込み）",
    "The character faces -Z": "キャラクターは -Z を向いています",
    "Front and Up are the same axis of the rig: choose a front across its up axis":
        "正面と上方向がリグの同じ軸です：上方向に垂直な正面を選んでください",
    "From the rig: where knees bend to and elbows away from, else (or where more feet say the opposite) where the "
    "feet point":
        "リグから判定：膝が曲がる側（肘はその反対側）、なければ（または逆を示す足のほうが多ければ）足先の向き",
    "Toward -Y": "-Y 方向",
    "Toward +Y": "+Y 方向",
    "Toward -X": "-X 方向",
    "Toward +X": "+X 方向",
    "The character faces -Y (Blender's convention)": "キャラクターは -Y を向いています（Blender の慣例）",
    "The character faces +Y": "キャラクターは +Y を向いています",
    "The character faces -X": "キャラクターは -X を向いています",
    "The character faces +X": "キャラクターは +X を向いています",
    "Save Joint Limit Preset": "関節制限プリセットを保存",
    "Save the active bone's joint limit as a user preset, listed in the preset menu (kept for the left side: a right-side bone's limit is mirrored, so that the preset gives each side its own)":
        "アクティブなボーンの関節制限をユーザープリセットとして保存し、プリセットメニューに表示します（左側として保存：右側のボーンの制限はミラーされるので、プリセットはそれぞれの側に正しく適用されます）",
    "Name of the preset (letters, digits, spaces and _ - ( ) .); a preset of the same name is replaced":
        "プリセットの名前（文字・数字・空白と _ - ( ) .）。同じ名前のプリセットは置き換えられます",
    "Limb IK": "四肢 IK",
    "Pose an arm or leg by its end bone with exact analytic IK: drag the target, wheel or Ctrl+drag turns the elbow/knee":
        "末端ボーンで腕や脚を解析的 IK でポーズ付けします：ターゲットをドラッグ、ホイールまたは Ctrl+ドラッグで肘・膝を回します",
    "Target": "ターゲット",
    "Where the end bone's head goes, in armature space": "末端ボーンのヘッドの目標位置（アーマチュア空間）",
    "Swivel": "スイベル角",
    "Rotation of the elbow/knee about the root-to-target axis": "付け根からターゲットへの軸まわりの肘・膝の回転",
    "Use Orientation": "向きを使用",
    "Also rotate the end bone to Target Rotation": "末端ボーンもターゲット回転に合わせて回転させます",
    "Target Rotation": "ターゲット回転",
    "Armature-space rotation of the end bone (w, x, y, z)": "末端ボーンのアーマチュア空間での回転（w, x, y, z）",
    "Use Limits": "制限を使用",
    "Respect the bones' joint limits and hinge range": "ボーンの関節制限とヒンジの範囲を守ります",
    "Axis of the middle joint in the lower bone's space": "下側ボーンの空間での中間関節の軸",
    "The middle bone's Hinge limit axis if it has one, else the axis its Lock Rotation leaves free, else from the "
    "rest-pose bend (local X when straight)":
        "中間ボーンにヒンジ制限があればその軸、なければ回転ロックで自由な軸、それもなければレストポーズの曲がりから判定"
        "（まっすぐならローカル X）",
    "Local +X": "ローカル +X",
    "Local -X": "ローカル -X",
    "Local +Z": "ローカル +Z",
    "Local -Z": "ローカル -Z",
    "Smooth Motion": "なめらかな動き",
    "Replace the motion between the selected bones' key poses by a smooth, limit-respecting one, keyed on every frame":
        "選択ボーンのキーポーズ間の動きを、制限を守るなめらかな動きに置き換え、毎フレームにキーを打ちます",
    "First frame of the range to use": "使用する範囲の最初のフレーム",
    "Last frame of the range to use": "使用する範囲の最後のフレーム",
    "Profile": "プロファイル",
    "What the motion minimises": "動きで最小化する量",
    "Minimum Acceleration": "加速度最小",
    "Cubic: least integrated squared angular acceleration [004 eq.5]": "3 次式：角加速度の 2 乗積分が最小 [004 eq.5]",
    "Minimum Jerk": "躍度最小",
    "Quintic: least integrated squared jerk (Flash & Hogan)": "5 次式：躍度の 2 乗積分が最小（Flash & Hogan）",
    "Via Points": "経由点",
    "Pass through the keys between the first and the last (otherwise stop at each)":
        "最初と最後の間のキーを通過します（オフなら各キーで停止）",
    "Channels": "チャンネル",
    "Which numbers are interpolated": "補間する値",
    "Swing on the limit's (s, t) plane and twist angle: follows the limit region": "制限の (s, t) 平面上のスイングとひねり角：可動領域に沿います",
    "Euler angles in the bone's order (XYZ for quaternion bones), unwrapped across ±180°":
        "ボーンの順序のオイラー角（クォータニオンのボーンは XYZ）、±180° をまたいで連続化",
    "Step": "間隔",
    "Key every Nth frame (key poses are always kept); the keys are clamped by the limits, frames between them are Blender's interpolation and may leave the limits":
        "N フレームごとにキーを打ちます（キーポーズは常に残ります）。キーは制限内に収められますが、キーの間のフレームは Blender の補間で、制限を外れることがあります",
    "Via Velocities": "経由点の速度",
    "How the motion passes the keys between the first and the last": "最初と最後の間のキーを動きがどう通過するか",
    "Clamped": "クランプ",
    "Never overshoot: the in-betweens stay within the range of the keys around them (like Auto Clamped handles)":
        "行き過ぎません：中割りは前後のキーの範囲内にとどまります（自動クランプハンドルと同様）",
    "The exact minimum of the profile: can swing far past unevenly spaced keys":
        "プロファイルの厳密な最小解：間隔が不均一なキーでは大きく行き過ぎることがあります",
    "The motion of {bones} leaves the range of its keys by up to {angle:.1f}°: set Via Velocities to Clamped to stay within the keys":
        "{bones} の動きはキーの範囲を最大 {angle:.1f}° はみ出します：キーの範囲内に収めるには経由点の速度をクランプにしてください",
    "CCD IK": "CCD IK",
    "Drag the tip of a chain (tail, spine, hair) with length-weighted CCD IK that respects joint limits":
        "長さで重み付けした CCD IK でチェーン（尻尾・背骨・髪）の先端をドラッグします（関節制限を守ります）",
    "Where the active bone's tail goes, in armature space": "アクティブなボーンのテールの目標位置（アーマチュア空間）",
    "Chain Length": "チェーンの長さ",
    "Bones in the chain, ending at the active bone (0 = up to the root)": "アクティブなボーンで終わるチェーンのボーン数（0 = ルートまで）",
    "Stop at Unconnected": "未接続で止める",
    "End the chain at the first bone not connected to its parent": "親に接続されていない最初のボーンでチェーンを終えます",
    "Iterations": "反復回数",
    "Most CCD sweeps (tip to root)": "CCD の掃引（先端からルートまで）の最大回数",
    "Tolerance": "許容誤差",
    "Stop when the tip is this close to the target (0 = 0.09% of the chain length)": "先端がターゲットにこの距離まで近づいたら停止します（0 = チェーン長の 0.09%）",
    "Length Weights": "長さの重み",
    "Damp each joint by the length of the chain beyond it [004 eq.1]": "各関節の回転を先のチェーンの長さで減衰させます [004 eq.1]",
    "Respect the bones' joint limits": "ボーンの関節制限を守ります",
    "Unit Angle": "単位角",
    "Largest rotation of a joint per sweep, as in MMD (0 = no cap)": "掃引ごとの関節の最大回転（MMD と同様、0 = 上限なし）",
    # --- skinning deformer ------------------------------------------------------------------------------
    "Derive SDEF Parameters": "SDEF パラメーターを導出",
    "Derive SDEF parameters C, R0, R1 for every vertex on exactly two bones and store them as the mesh attributes jl_sdef_c, jl_sdef_r0, jl_sdef_r1 (other vertices get their own position)":
        "ちょうど 2 本のボーンに属する頂点ごとに SDEF パラメーター C、R0、R1 を導出し、メッシュ属性 jl_sdef_c、jl_sdef_r0、jl_sdef_r1 に保存します（その他の頂点には自身の位置を入れます）",
    "Centre": "中心",
    "Where the rotation centre C of a vertex goes": "頂点の回転中心 C の置き方",
    "Project": "投影",
    "C at the foot of the perpendicular from the vertex to the bone line": "頂点からボーンの線へ下ろした垂線の足を C にします",
    "Joint": "関節",
    "C at the joint (the child's head) for every vertex": "すべての頂点で C を関節（子のヘッド）にします",
    "Boundary": "境界",
    "How the blend boundaries R0 (parent) and R1 (child) of each bone pair are found": "各ボーンの組のブレンド境界 R0（親）と R1（子）の求め方",
    "R0, R1 from a least-squares fit of the position along the bones to the weight": "ボーン沿いの位置をウェイトに最小 2 乗フィットして R0、R1 を求めます",
    "Extent": "範囲",
    "R0, R1 at the ends of the blend zone along the bones": "ボーン沿いのブレンド領域の両端を R0、R1 にします",
    "Padding": "余白",
    "Widen the blend zone [R0, R1] by this fraction of its length at each end": "ブレンド領域 [R0, R1] の両端をその長さのこの割合だけ広げます",
    "Add JointLimit Deformer": "JointLimit デフォーマーを追加",
    "Recompute the mesh's two-bone vertices with SDEF, SBS or Bezier skinning in a geometry-nodes modifier after its Armature modifier (no Python per frame)":
        "アーマチュアモディファイアーの後のジオメトリノードモディファイアーで、2 ボーンの頂点を SDEF・SBS・ベジエスキニングで再計算します（フレームごとの Python なし）",
    "SDEF Data": "SDEF データ",
    "Where the C, R0, R1 parameters come from": "C、R0、R1 パラメーターの取得元",
    "Automatic": "自動",
    "mmd_tools SDEF shape keys if present, else the derived jl_sdef_* attributes, else derive them now":
        "mmd_tools の SDEF シェイプキーがあればそれを、なければ導出した jl_sdef_* 属性を、それもなければここで導出します",
    "mmd_tools SDEF shape keys if present, else the derived jl_sdef_* attributes (derive them first with Derive SDEF Parameters, or add the deformer)":
        "mmd_tools の SDEF シェイプキーがあればそれを、なければ導出済みの jl_sdef_* 属性を使います（先に「SDEF パラメータを導出」を実行するか、デフォーマーを追加してください）",
    "mmd_tools Shape Keys": "mmd_tools シェイプキー",
    "C, R0, R1 from the shape keys mmd_sdef_c, mmd_sdef_r0, mmd_sdef_r1": "シェイプキー mmd_sdef_c、mmd_sdef_r0、mmd_sdef_r1 から C、R0、R1 を取得します",
    "Derived Attributes": "導出した属性",
    "C, R0, R1 from the attributes written by Derive SDEF Parameters": "「SDEF パラメーターを導出」が書き込んだ属性から C、R0、R1 を取得します",
    "Mode": "モード",
    "Skinning of the two-bone vertices (switchable later on the modifier: Mode 0 LBS, 1 SBS, 2 SDEF, 3 Bezier)":
        "2 ボーンの頂点のスキニング（後でモディファイアーで切替可能：Mode 0 LBS、1 SBS、2 SDEF、3 ベジエ）",
    "LBS": "LBS",
    "Linear blend skinning [002 eq.1-3] (what the Armature modifier does)": "線形ブレンドスキニング [002 eq.1-3]（アーマチュアモディファイアーと同じ）",
    "SBS": "SBS",
    "Spherical blend skinning about the centre C [002 eq.4-7]": "中心 C まわりの球面ブレンドスキニング [002 eq.4-7]",
    "SDEF (SBS+)": "SDEF（SBS+）",
    "SBS+ with boundary correction, equal to MMD's SDEF at blend 0.5 [002 eq.8-22]": "境界補正付きの SBS+。ブレンド 0.5 で MMD の SDEF と同じ [002 eq.8-22]",
    "Bezier": "ベジエ",
    "Quadratic Bezier rotation centre through the joint [002 eq.23-26]": "関節を通る 2 次ベジエの回転中心 [002 eq.23-26]",
    "Blend": "ブレンド",
    "SDEF blend s [002 eq.22]: 1 = LBS centre, 0 = boundary line": "SDEF のブレンド s [002 eq.22]：1 = LBS の中心、0 = 境界線",
    "Remove JointLimit Deformer": "JointLimit デフォーマーを削除",
    "Remove the JointLimit deformer: its modifiers, helper object, attributes and the node groups if unused, and give a taken-over mmd_tools SDEF binding back (SDEF data such as mmd_tools shape keys or derived attributes stay)":
        "JointLimit デフォーマーを削除します：モディファイアー、補助オブジェクト、属性、未使用ならノードグループも。引き継いだ mmd_tools の SDEF バインドは元に戻します（mmd_tools のシェイプキーや導出した属性などの SDEF データは残ります）",
    "Toggle JointLimit Deformer": "JointLimit デフォーマーの切り替え",
    "Switch the JointLimit deformer off, so the Armature modifier alone deforms every vertex (as without the deformer), or on again. Switching only the deformer's modifier off would leave the two-bone vertices undeformed: the Armature modifier skips them while the deformer is on":
        "JointLimit デフォーマーをオフにして、アーマチュアモディファイアーだけで全頂点を変形させます（デフォーマーがない場合と同じ）。もう一度でオンに戻します。デフォーマーのモディファイアーだけをオフにすると 2 ボーンの頂点は変形しません：デフォーマーがオンの間、アーマチュアモディファイアーはそれらを飛ばすためです",
    "Bake JointLimit Deformer": "JointLimit デフォーマーをベイク",
    "Bake SDEF / SBS / Bezier skinning with the numpy core for a frame range, as shape keys or meshes (a fallback where geometry nodes are not available, e.g. for export); Mode, Blend and Two Strongest Groups not set here are the mesh's deformer's":
        "フレーム範囲の SDEF・SBS・ベジエスキニングを numpy コアでシェイプキーまたはメッシュとしてベイクします（エクスポートなどジオメトリノードが使えない場合の代替）。ここで設定しないモード・ブレンド・上位2グループはメッシュのデフォーマーの設定を使います",
    "Scene Frame Range": "シーンのフレーム範囲",
    "Bake the scene's frame range; Start and End are used only when this is off": "シーンのフレーム範囲をベイクします。開始・終了はこれがオフのときだけ使います",
    "First frame to bake when Scene Frame Range is off": "シーンのフレーム範囲がオフのときにベイクする最初のフレーム",
    "Last frame to bake when Scene Frame Range is off": "シーンのフレーム範囲がオフのときにベイクする最後のフレーム",
    "Start": "開始",
    "End": "終了",
    "Skinning of the two-bone vertices": "2 ボーンの頂点のスキニング",
    "Output": "出力",
    "What to write per frame": "フレームごとに書き出すもの",
    "Shape Keys": "シェイプキー",
    "One shape key per frame (jl_frame_0001, ...), keyed to 1 on its frame and 0 on the neighbouring frames":
        "フレームごとに 1 つのシェイプキー（jl_frame_0001 など）。そのフレームで 1、前後のフレームで 0 にキーを打ちます",
    "Meshes": "メッシュ",
    "One new mesh data-block per frame (<mesh>_jl_frame_0001, ...), e.g. for export": "フレームごとに新しいメッシュデータブロック（<メッシュ>_jl_frame_0001 など）。エクスポート用など",
    "Disable Modifiers": "モディファイアーを無効化",
    "All Selected Meshes": "選択中のすべてのメッシュ",
    "Act on every selected mesh, not only the active one": "アクティブなメッシュだけでなく、選択中のすべてのメッシュに対して実行します",
    "Two Strongest Groups": "強い 2 グループ",
    "Vertices with three or more deforming groups use their two strongest groups, renormalised (otherwise they follow the Armature modifier)":
        "3 つ以上の変形グループを持つ頂点は、最も強い 2 グループを正規化し直して使います（オフならアーマチュアモディファイアーに従います）",
    "Take Over mmd_tools SDEF": "mmd_tools の SDEF を引き継ぐ",
    "Unbind mmd_tools' own SDEF (its mmd_sdef_skinning shape key and mask) while the deformer is on; Remove restores it":
        "デフォーマーを使う間、mmd_tools 自身の SDEF（mmd_sdef_skinning シェイプキーとマスク）を解除します。削除すると元に戻ります",
    "Write as mmd_tools SDEF Data": "mmd_tools の SDEF データとして書き込む",
    "Also write the parameters as mmd_tools' shape keys mmd_sdef_c, mmd_sdef_r0, mmd_sdef_r1 (overwriting them), so its PMX export carries them":
        "パラメーターを mmd_tools のシェイプキー mmd_sdef_c、mmd_sdef_r0、mmd_sdef_r1 にも書き込みます（既存のものは上書き）。mmd_tools の PMX エクスポートに含まれます",
    "Turn off the Armature modifier, the deformer and the modifiers before them, and mute the other shape keys "
    "(the baked keys include their work), so the baked shape keys play the animation; modifiers after the "
    "deformer (Mirror, Subdivision) stay on":
        "アーマチュアモディファイアー、デフォーマーとその前のモディファイアーをオフにし、ほかのシェイプキーをミュートして"
        "（ベイクしたキーにその結果が含まれます）、ベイクしたシェイプキーでアニメーションを再生します。デフォーマーより後の"
        "モディファイアー（ミラー、サブディビジョンサーフェス）はオンのままです",
    # --- presets -------------------------------------------------------------------------------------
    "Neck": "首",
    "Cervical spine on one neck bone: flexion 45, extension 45, side bend 45, rotation 70":
        "首のボーン 1 本で頸椎：屈曲 45、伸展 45、側屈 45、回旋 70",
    "Spine Segment": "背骨（1 節）",
    "One of three spine bones: thoracolumbar flexion 80, extension 25, side bend 35, rotation 45 shared out":
        "3 本の背骨ボーンの 1 本：胸腰椎の屈曲 80、伸展 25、側屈 35、回旋 45 を分配",
    "Shoulder": "肩",
    "Upper arm (ball joint): flexion 170, extension 60, abduction 170, adduction 30, rotation 80":
        "上腕（球関節）：屈曲 170、伸展 60、外転 170、内転 30、回旋 80",
    "Elbow (Hinge)": "肘（ヒンジ）",
    "Forearm bending about local X: 0 to 145 of flexion": "前腕がローカル X 軸まわりに曲がります：屈曲 0〜145",
    "Forearm Twist": "前腕のひねり",
    "Forearm twist bone: pronation and supination 80 each, no bending": "前腕のひねりボーン：回内・回外それぞれ 80、曲げなし",
    "Wrist": "手首",
    "Hand: flexion 80, extension 70, radial deviation 20, ulnar deviation 30, no twist (that is the forearm's)":
        "手：掌屈 80、背屈 70、橈屈 20、尺屈 30、ひねりなし（ひねりは前腕）",
    "Hip": "股関節",
    "Thigh (ball joint): flexion 120, extension 30, abduction 45, adduction 30, rotation 45":
        "大腿（球関節）：屈曲 120、伸展 30、外転 45、内転 30、回旋 45",
    "Knee (Hinge)": "膝（ヒンジ）",
    "Shin bending about local X: 0 to 140 of flexion": "すねがローカル X 軸まわりに曲がります：屈曲 0〜140",
    "Ankle": "足首",
    "Foot: dorsiflexion 20, plantar flexion 50, inversion and eversion 25 as twist": "足：背屈 20、底屈 50、内がえし・外がえし 25（ひねりとして）",
    "Toe": "つま先",
    "Toe base: flexion 40, extension 70, little sideways motion": "足指の付け根：屈曲 40、伸展 70、横方向はわずか",
    "Carpus (Hinge)": "手根（ヒンジ）",
    "Four-legged forefoot bending backward about local X: 16 past straight to 148 of flexion (a dog's carpus, 196 "
    "to 32 degrees)":
        "四足の前足がローカル X 軸まわりに後ろへ曲がります：まっすぐを 16 越えてから屈曲 148 まで（犬の手根、196〜32 度）",
    "Hock (Hinge)": "飛節（ヒンジ）",
    "Four-legged hind foot (or a bird's backward 'knee') bending forward about local X: from 15 short of straight to "
    "142 of flexion (a dog's tarsus, 165 to 38 degrees)":
        "四足の後足（または鳥の後ろ向きの「膝」）がローカル X 軸まわりに前へ曲がります：まっすぐの 15 手前から屈曲 142 まで"
        "（犬の足根、165〜38 度）",
    "Finger Base (MCP)": "指の付け根（MP）",
    "First finger joint: flexion 90, extension 30, spreading 20 each way": "指の第 1 関節：屈曲 90、伸展 30、開閉 各 20",
    "Finger Middle (PIP)": "指の中間（PIP）",
    "Middle finger joint, a hinge: 0 to 100 of flexion": "指の中間関節（ヒンジ）：屈曲 0〜100",
    "Finger Tip (DIP)": "指先（DIP）",
    "Last finger joint, a hinge: 0 to 80 of flexion": "指先の関節（ヒンジ）：屈曲 0〜80",
    "Arm (Shoulder, Elbow, Wrist)": "腕（肩・肘・手首）",
    "Select upper arm, forearm and hand (of one or both arms): shoulder, elbow hinge, wrist":
        "上腕・前腕・手を選択（片腕または両腕）：肩、肘のヒンジ、手首",
    "Arm with Twist Bone": "腕（ひねりボーン付き）",
    "Select upper arm, forearm, forearm twist bone and hand: shoulder, elbow hinge, forearm twist, wrist":
        "上腕・前腕・前腕ひねりボーン・手を選択：肩、肘のヒンジ、前腕のひねり、手首",
    "Leg (Hip, Knee, Ankle, Toe)": "脚（股関節・膝・足首・つま先）",
    "Select thigh, shin, foot and toe (of one or both legs): hip, knee hinge, ankle, toe":
        "大腿・すね・足・つま先を選択（片脚または両脚）：股関節、膝のヒンジ、足首、つま先",
    "Front Leg, Four-Legged (Shoulder, Elbow, Carpus)": "前脚・四足（肩・肘・手根）",
    "Select upper arm, forearm and forefoot of a four-legged rig's front legs: shoulder, elbow hinge, carpus hinge":
        "四足のリグの前脚の上腕・前腕・前足を選択：肩、肘のヒンジ、手根のヒンジ",
    "Hind Leg, Four-Legged (Hip, Knee, Hock)": "後脚・四足（股関節・膝・飛節）",
    "Select thigh, shin and hind foot of a four-legged rig's hind legs: hip, knee hinge, hock hinge":
        "四足のリグの後脚の大腿・すね・後足を選択：股関節、膝のヒンジ、飛節のヒンジ",
    "Fingers (Base, Middle, Tip)": "指（付け根・中間・指先）",
    "Select the three bones of one or more fingers: base joint, middle and tip hinges":
        "1 本以上の指の 3 つのボーンを選択：付け根の関節、中間と指先のヒンジ",
    "Spine and Neck": "背骨と首",
    "Select the spine bones from the hips up: three spine segments, then the neck":
        "腰から上の背骨のボーンを選択：背骨 3 節、続いて首",
    "A preset you saved (applied to every selected bone)": "保存したプリセット（選択中のすべてのボーンに適用）",
    # --- poll messages and reports -------------------------------------------------------------------
    "Select an armature": "アーマチュアを選択してください",
    "Enter Pose Mode first": "先にポーズモードに入ってください",
    "Select a mesh object": "メッシュオブジェクトを選択してください",
    "Switch to Object Mode first": "先にオブジェクトモードに切り替えてください",
    "No limited bones to clamp (enable a limit on the bone, or use All Limited Bones)":
        "制限内に収める制限付きボーンがありません（ボーンの制限を有効にするか、「すべての制限付きボーン」を使ってください）",
    "No limited bones to bake": "ベイクする制限付きボーンがありません",
    "Fitted to the front and up found in each rig ({frames}): set Front or Up if that is not the character's":
        "各リグで見つけた前と上に合わせました（{frames}）：キャラクターのものと違う場合は「正面」か「上」を設定してください",
    "{bones} rest bent against the way the preset flexes them: they bend the other way. A four-legged rig's front "
    "legs take the Front Leg preset and its hind legs the Hind Leg preset (Four-Legged); a bird's backward 'knee', its "
    "ankle, takes the Hock preset on that bone alone; else set Front if the character does not face the front used":
        "{bones} はプリセットの屈曲と逆向きに曲がった状態で休んでいます：逆に曲がる関節です。四足のリグの前脚には前脚の"
        "プリセット、後脚には後脚のプリセット（四足）を使ってください。鳥の後ろ向きの「膝」（実は足首）には、そのボーン"
        "だけに飛節のプリセットを使ってください。そうでなければ、キャラクターが使った正面を向いていないときは正面を設定"
        "してください",
    "{bones} stand as a four-legged rig's carpus or hock, where the human ranges bend them far past straight: the "
    "Front Leg and Hind Leg presets (Four-Legged) give them the Carpus and Hock hinges":
        "{bones} は四足のリグの手根または飛節のように立っており、人の可動域ではまっすぐを大きく越えて曲がります："
        "前脚・後脚のプリセット（四足）で手根と飛節のヒンジになります",
    "{bones} count as rig mechanism (a constraint of the rig turns them, or they are hidden): Clamp Playback clamps "
    "them, but All Limited Bones leaves them to the rig (select them for Apply and Bake)":
        "{bones} はリグの仕組みとみなされます（リグのコンストレイントが回すか、非表示です）：再生時クランプはクランプしますが、"
        "「すべての制限付きボーン」はリグに任せます（適用とベイクには選択してください）",
    "The limited bones here count as rig mechanism, which All Limited Bones leaves to the rig: select them to work on "
    "them":
        "ここの制限付きボーンはリグの仕組みとみなされ、「すべての制限付きボーン」はリグに任せます：対象にするには選択して"
        "ください",
    "Disable Modifiers works with shape keys only: baked meshes do not play on the object, which would stay in its "
    "rest pose; bake as shape keys, or leave Disable Modifiers off":
        "「モディファイアーを無効化」はシェイプキーにのみ使えます: ベイクしたメッシュはオブジェクト上で再生されず、"
        "オブジェクトはレストポーズのままになります。シェイプキーとしてベイクするか、このオプションをオフにしてください",
    "The action {action} of {rig} comes from a library (linked or overridden) and cannot keep keys: make it local first (Make Local, or give the rig an action of its own)":
        "{rig} のアクション {action} はライブラリ由来(リンクまたはオーバーライド)で、キーを保持できません: 先にローカル化してください(ローカル化、またはリグに専用のアクションを与える)",
    "No limited bones to convert": "変換する制限付きボーンがありません",
    "Select the bones to convert": "変換するボーンを選択してください",
    "None of the bones has a local-space Limit Rotation constraint or IK limits":
        "ローカル空間の回転制限コンストレイントや IK 制限を持つボーンがありません",
    "Select the bones to copy to, and make the source bone active": "コピー先のボーンを選択し、コピー元のボーンをアクティブにしてください",
    "No mirror bones found for the selection (names need .L/.R, _L/_R or Left/Right)":
        "選択に対応する反対側のボーンが見つかりません（名前に .L/.R、_L/_R、Left/Right が必要です）",
    "The outline has no vertices": "輪郭に頂点がありません",
    "Target and swivel must be finite numbers": "ターゲットとスイベル角は有限の数値にしてください",
    "Target must be finite numbers": "ターゲットは有限の数値にしてください",
    "Run this tool from a 3D Viewport": "このツールは 3D ビューポートから実行してください",
    "Select the bones to set": "設定するボーンを選択してください",
    "Clamped {moved} of 1 limited bone": "制限付きボーン 1 本中 {moved} 本を制限内に戻しました",
    "Clamped {moved} of {count} limited bones": "制限付きボーン {count} 本中 {moved} 本を制限内に戻しました",
    "Copied the joint limit of '{name}' to 1 bone": "「{name}」の関節制限を 1 本のボーンにコピーしました",
    "Copied the joint limit of '{name}' to {count} bones": "「{name}」の関節制限を {count} 本のボーンにコピーしました",
    "Mirrored 1 joint limit": "関節制限を 1 件ミラーしました",
    "Mirrored {count} joint limits": "関節制限を {count} 件ミラーしました",
    "Baked 1 limited bone over frames {start}-{end}": "制限付きボーン 1 本をフレーム {start}-{end} でベイクしました",
    "Baked {count} limited bones over frames {start}-{end}": "制限付きボーン {count} 本をフレーム {start}-{end} でベイクしました",
    "Added Limit Rotation constraints to 1 bone": "1 本のボーンに回転制限コンストレイントを追加しました",
    "Added Limit Rotation constraints to {count} bones": "{count} 本のボーンに回転制限コンストレイントを追加しました",
    "Converted 1 bone": "1 本のボーンを変換しました",
    "Converted {count} bones": "{count} 本のボーンを変換しました",
    "The rest orientations of {bones} are not the mirror images of their partners' (up to {angle:.0f}° apart: a bone "
    "roll or direction differs), so the mirrored limits bend them otherwise in the world: apply a preset with Fit to "
    "Rig to both sides, or set those limits by hand":
        "{bones} のレスト時の向きが相手側のミラー像になっていません（最大 {angle:.0f}° の差：ボーンのロールか向きが"
        "異なります）。ミラーした制限はワールドで別の曲がり方をします：両側に「リグに合わせる」でプリセットを適用するか、"
        "その制限を手で設定してください",
    "Limits set here on {bones} are not kept when the file is opened again: the library file of this override "
    "stores no limit settings (it was saved without JointLimit); open and save it with JointLimit, then set them "
    "again here":
        "{bones} にここで設定した制限は、ファイルを開き直すと残りません：このオーバーライドのライブラリファイルには制限の"
        "設定が保存されていません（JointLimit なしで保存）。JointLimit を入れて開いて保存し、ここでもう一度設定してください",
    "Muted the Limit Rotation constraints of {bones} instead of removing them: they come from the library of this "
    "override, which Blender keeps (removed, they would be back and acting when the file is opened again)":
        "{bones} の回転制限コンストレイントは削除せずミュートしました：このオーバーライドのライブラリから来ており、"
        "Blender はそれを保持します（削除してもファイルを開き直すと戻り、有効になります）",
    "Left {bones} as they are: two of their Limit Rotation constraints limit one axis to ranges that do not overlap "
    "(one after the other they hold it at one angle), which one limit cannot hold (check those ranges)":
        "{bones} はそのままにしました：その回転制限コンストレイントのうち 2 つがひとつの軸を重ならない範囲に制限しています"
        "（順に評価すると一つの角度に固定されます）。ひとつの制限では表せません（その範囲を確認してください）",
    "Left {bones} as they are: their Limit Rotation constraints read the rotation in different Euler orders (or "
    "one with legacy behaviour), which one limit cannot hold":
        "{bones} はそのままにしました：その回転制限コンストレイントは異なるオイラー順序（またはレガシー動作）で回転を読むため、"
        "ひとつの制限では表せません",
    "The Limit Rotation constraints of {bones} have a minimum above its maximum: Blender holds such an axis at one "
    "angle, the conversion at the middle of the two (check those ranges)":
        "{bones} の回転制限コンストレイントに最小が最大より大きい軸があります：Blender はその軸を一つの角度に固定し、"
        "変換では二つの中間に固定します（範囲を確認してください）",
    "'{name}' has no joint limit: copying it would switch off the limits of {bones}. Make a bone with a limit "
    "active, or switch those limits off":
        "'{name}' には関節制限がありません：コピーすると {bones} の制限がオフになります。制限のあるボーンを"
        "アクティブにするか、それらの制限をオフにしてください",
    "{bones} had no joint limit: mirrored from the other side": "{bones} には関節制限がありませんでした：反対側からミラーしました",
    "{bones} and their mirror bones have no joint limit to mirror": "{bones} とそのミラーボーンにはミラーする関節制限がありません",
    "'{name}' has no joint limit to copy: make a bone with a limit active":
        "'{name}' にはコピーする関節制限がありません：制限のあるボーンをアクティブにしてください",
    "{error} (frame {frame})": "{error}（フレーム {frame}）",
    "Left {bones} unkeyed: no rotation keys, inside the limits on every frame":
        "{bones} はキーを打ちませんでした：回転キーがなく、すべてのフレームで制限の内側です",
    "Key poses of {bones} were outside their limits: the motion passes through them clamped":
        "{bones} のキーポーズが制限の外側でした：モーションは制限内に補正したポーズを通ります",
    "Replace Limits": "制限を置き換え",
    "Limit Kind": "制限の種類",
    "What a Limit Rotation constraint becomes (IK limits always become Swing & Twist)":
        "回転制限コンストレイントを何に変換するか（IK 制限は常にスイングとひねり）",
    "A rectangle of swing ranges through s = tan(angle/2) and a twist range, corrected along the sphere (the same "
    "ranges, not the same region as the constraint's Euler clamp)":
        "s = tan(角度/2) によるスイング範囲の矩形とひねり範囲。球面に沿って補正します（範囲は同じですが、"
        "コンストレイントのオイラー角によるクランプとは領域が異なります）",
    "Euler ranges in the constraint's order: the region the constraint allows (Euler (Equivalent Ranges) where its "
    "middle axis reaches past 80°)":
        "コンストレイントの順序でのオイラー範囲：コンストレイントが許す領域と同じ（中間軸が 80° を超える場合は"
        "「オイラー（等価な範囲）」）",
    "Also convert bones that have a joint limit already, replacing it (its shape, hinge or Euler ranges); off: they "
    "keep theirs, and their constraints are left as they are":
        "関節制限がすでにあるボーンも変換し、その制限（形状、ヒンジ、オイラー範囲）を置き換えます。オフ：そのボーンは"
        "自分の制限を保ち、コンストレイントもそのままです",
    "The bone has a joint limit already: switch on Replace Limits to replace it with the converted one":
        "ボーンにはすでに関節制限があります：変換したもので置き換えるには「制限を置き換え」をオンにしてください",
    "The {count} bones have joint limits already: switch on Replace Limits to replace them with the converted ones":
        "{count} 本のボーンにはすでに関節制限があります：変換したもので置き換えるには「制限を置き換え」をオンにしてください",
    "Kept the joint limit of 1 bone that has one ({bones}; Replace Limits converts it too)":
        "関節制限のある 1 本のボーンはその制限を保ちました（{bones}。「制限を置き換え」でこれも変換します）",
    "Kept the joint limits of {count} bones that have one ({bones}; Replace Limits converts them too)":
        "関節制限のある {count} 本のボーンはその制限を保ちました（{bones}。「制限を置き換え」でこれらも変換します）",
    "Switched the joint limit of 1 bone on again ({bones}): its Limit Rotation constraints were made from it (Joint "
    "Limits to Constraints), so it keeps its own shape":
        "1 本のボーンの関節制限を再びオンにしました（{bones}）：その回転制限コンストレイントはこの制限から作られたもの"
        "（関節制限をコンストレイントへ）なので、元の形を保ちます",
    "Switched the joint limits of {count} bones on again ({bones}): their Limit Rotation constraints were made from "
    "them (Joint Limits to Constraints), so they keep their own shapes":
        "{count} 本のボーンの関節制限を再びオンにしました（{bones}）：それらの回転制限コンストレイントはこれらの制限から"
        "作られたものなので、元の形を保ちます",
    "Replaced the joint limit of 1 bone ({bones})": "1 本のボーンの関節制限を置き換えました（{bones}）",
    "Replaced the joint limits of {count} bones ({bones})": "{count} 本のボーンの関節制限を置き換えました（{bones}）",
    "End frame {end} is before start frame {start}": "終了フレーム {end} が開始フレーム {start} より前です",
    "Left {bones} as they are: a driver sets their rotation, so keys would not play and no limit holds them (limit "
    "what drives them, or remove the driver)":
        "{bones} はそのままにしました：ドライバーが回転を設定するため、キーは再生されず、制限も保てません（ドライバーの元を"
        "制限するか、ドライバーを削除してください）",
    "The NLA strip tweaked on {rig} repeats its action (Repeat {repeat:g}): its keys play in every repeat, so they "
    "cannot take the frames of one; set its Repeat to 1, or leave tweak mode (a new action then takes the keys on top)":
        "{rig} で微調整中の NLA ストリップはアクションを繰り返しています（リピート {repeat:g}）：キーはすべての繰り返しで再生"
        "されるため、ひとつの繰り返しのフレームを保てません。リピートを 1 にするか、微調整モードを抜けてください（新しい"
        "アクションが上にキーを受けます）",
    "Select the bones to smooth": "スムーズにするボーンを選択してください",
    "None of the selected bones has two or more rotation keys in the frame range":
        "選択したボーンのどれにも、フレーム範囲内に 2 つ以上の回転キーがありません",
    "End frame {end} must be after start frame {start}": "終了フレーム {end} は開始フレーム {start} より後にしてください",
    "; skipped (fewer than two keys): {bones}": "；スキップ（キーが 2 つ未満）：{bones}",
    "Left {bones} as they are: a rotation F-curve of theirs (or its group) is locked (unlock it to key the motion)":
        "{bones} はそのままにしました：回転の F カーブ（またはそのグループ）がロックされています（モーションをキーするにはロックを"
        "解除してください）",
    "(+{count} more)": "（ほか {count} 本）",
    "Left {bones} as they are: their rotation F-curves have modifiers (Noise, Generator, ...), which would act again "
    "on the keys of the motion: apply or remove them first":
        "{bones} はそのままにしました：回転の F カーブにモディファイアー（ノイズ、ジェネレーターなど）があり、モーションの"
        "キーにもう一度かかってしまいます：先に適用するか削除してください",
    "The keys of {bones} turn more than half a turn about one axis from one key to the next ({angle:.0f}° between "
    "frames {a} and {b}): the motion takes the shorter way round and keys its values; key a pose in between to keep "
    "the longer turn":
        "{bones} のキーは隣のキーまでにひとつの軸まわりで半回転以上回ります（フレーム {a} と {b} の間で {angle:.0f}°）："
        "モーションは短い方の向きに回り、その値でキーします。長い回転を保つには間にポーズをキーしてください",
    "The Constant (stepped) keys of {bones} in the range now interpolate smoothly":
        "範囲内の {bones} の一定（ステップ）キーは滑らかに補間されるようになりました",
    "Target Rotation must be a non-zero quaternion": "ターゲット回転はゼロでないクォータニオンにしてください",
    "the modifiers before the Armature modifier change the vertex count":
        "アーマチュアモディファイアーより前のモディファイアーが頂点数を変えます",
    "Smoothed 1 bone": "1 本のボーンをスムーズにしました",
    "Smoothed {count} bones": "{count} 本のボーンをスムーズにしました",
    "Set 1 bone from '{preset}' ({mirrored} mirrored for the right side)":
        "「{preset}」から 1 本のボーンを設定しました（右側としてミラー：{mirrored} 本）",
    "Set {count} bones from '{preset}' ({mirrored} mirrored for the right side)":
        "「{preset}」から {count} 本のボーンを設定しました（右側としてミラー：{mirrored} 本）",
    "Set {count} bones from '{preset}' ({mirrored} mirrored for the right side): {joints}":
        "「{preset}」から {count} 本のボーンを設定しました（右側としてミラー：{mirrored} 本）：{joints}",
    "Set 1 bone from '{preset}' ({mirrored} mirrored for the right side): {joints}":
        "「{preset}」から 1 本のボーンを設定しました（右側としてミラー：{mirrored} 本）：{joints}",
    "The chain from '{root}' ({bones}) does not match '{preset}': select its {most} bones in a chain, or bones "
    "whose names say which joints they are":
        "「{root}」からのチェーン（{bones}）は「{preset}」に合いません：{most} 本のボーンをチェーンとして選択するか、"
        "名前で関節が分かるボーンを選択してください",
    "Unknown preset '{preset}'": "不明なプリセット「{preset}」",
    "Unknown joint preset '{key}'": "不明な関節プリセット「{key}」",
    "Unknown chain preset '{key}'": "不明なチェーンプリセット「{key}」",
    "The chain from '{root}' has {count} bones; '{preset}' sets at most {most}":
        "「{root}」からのチェーンは {count} 本のボーンですが、「{preset}」が設定できるのは最大 {most} 本です",
    "Bone '{name}' has several selected children: select separate chains":
        "ボーン「{name}」には選択された子が複数あります：チェーンを分けて選択してください",
    "Swing & Twist channels cannot pass the swing pole (180°), which the keys of {bones} pass (first between frames {a} and {b}): the motion goes the other way round there; use Euler channels":
        "スイングとツイストのチャンネルはスイングの極（180°）を越えられませんが、{bones} のキーはそこを越えます（最初はフレーム {a} と {b} の間）：そこでは動きが逆回りになります。オイラーのチャンネルを使ってください",
    "The motion of {bones} turns up to {angle:.0f}° from one frame to the next (a large swing on Swing & Twist channels, which runs fast near rest, keys far outside the limits, or a swing past 180°): check those frames, use Euler channels or move the keys inside the limits":
        "{bones} の動きは 1 フレームで最大 {angle:.0f}° 回ります（スイングとツイストのチャンネルでの大きなスイングは静止姿勢の近くで速く動きます。ほかに制限から大きく外れたキー、または 180° を越えるスイング）：そのフレームを確認し、オイラーのチャンネルを使うかキーを制限内に移してください",
    "The motion of {bones} turns up to {angle:.0f}° from one frame to the next (keys far apart in angle and close in time, or keys far outside the limits): check those frames, space the keys further apart or move them inside the limits":
        "{bones} の動きは 1 フレームで最大 {angle:.0f}° 回ります（角度が大きく離れたキーが時間的に近い、または制限から大きく外れたキー）：そのフレームを確認し、キーの間隔を広げるかキーを制限内に移してください",
    "With Step {step}, frames between the keys are Blender's interpolation and may leave the joint limits of {bones}: use Step 1, or live limits' Clamp Playback":
        "ステップ {step} では、キーの間のフレームは Blender の補間で、{bones} の関節制限を外れることがあります：ステップ 1 か、ライブ制限の「再生時に制限」を使ってください",
    "Limb IK uses only a Hinge limit on the middle bone; the {kind} limit of '{bone}' is not applied: run Apply afterwards":
        "リム IK は中間ボーンのヒンジ制限のみを使います。「{bone}」の{kind}制限は適用されません：後で適用を実行してください",
    "Could not write the preset: {error}": "プリセットを書き込めませんでした：{error}",
    "Saved preset '{name}' ({path})": "プリセット「{name}」を保存しました（{path}）",
    "Replaced preset '{name}' ({path})": "プリセット「{name}」を置き換えました（{path}）",
    "The preset name is empty": "プリセット名が空です",
    "The preset name is longer than {limit} characters": "プリセット名が {limit} 文字を超えています",
    "Invalid preset name '{name}': use letters, digits, spaces and _ - ( ) . only":
        "無効なプリセット名「{name}」：文字・数字・空白と _ - ( ) . だけを使ってください",
    "No user preset named '{name}'": "ユーザープリセット「{name}」はありません",
    "Preset '{name}' is not UTF-8 text": "プリセット「{name}」は UTF-8 のテキストではありません",
    "Preset '{name}' is not valid JSON: {error} (line {line}, column {column})":
        "プリセット「{name}」は正しい JSON ではありません：{error}（{line} 行 {column} 列）",
    "Preset '{name}' is not a JointLimit preset (expected \"format\": \"{format}\" and a \"joint\" object)":
        "プリセット「{name}」は JointLimit のプリセットではありません（\"format\": \"{format}\" と \"joint\" オブジェクトが必要です）",
    "Preset '{name}': {problem}": "プリセット「{name}」：{problem}",
    "A preset must be a JSON object of settings": "プリセットは設定の JSON オブジェクトでなければなりません",
    "Field 'kind' must be one of {allowed}": "フィールド 'kind' は {allowed} のいずれかにしてください",
    "Unknown preset field '{field}'": "不明なプリセットのフィールド '{field}'",
    "Field '{field}' must be one of {allowed}": "フィールド '{field}' は {allowed} のいずれかにしてください",
    "Field '{field}' must be a list of {count} numbers": "フィールド '{field}' は {count} 個の数値のリストにしてください",
    "Field '{field}' must have -{bound} <= min < max <= {bound} degrees":
        "フィールド '{field}' は -{bound} <= 最小 < 最大 <= {bound} 度にしてください",
    "Field '{field}' must lie within -180 and 180 degrees": "フィールド '{field}' は -180〜180 度にしてください",
    "Field '{field}' must lie within 0 and 179 degrees": "フィールド '{field}' は 0〜179 度にしてください",
    "Field '{field}' must be true or false": "フィールド '{field}' は true か false にしてください",
    "Field '{field}' must lie within 1 and 64": "フィールド '{field}' は 1〜64 にしてください",
    "Field '{field}' must be a list of [swing z, swing x, bulge] vertices":
        "フィールド '{field}' は [スイング z, スイング x, 膨らみ] の頂点のリストにしてください",
    "Field '{field}' must have swing angles within -179 and 179 degrees and bulges within -10 and 10":
        "フィールド「{field}」のスイング角は -179 から 179 度、バルジは -10 から 10 の範囲にしてください",
    "Each value of 'euler_min' must be below the one of 'euler_max'": "'euler_min' の各値は 'euler_max' の値より小さくしてください",
}


def normalise(text):
    """Whitespace collapsed: how ``MESSAGES`` keys are written."""
    return " ".join(text.split())


def _operator_classes():
    from . import operators

    return operators.classes


def build_dictionary():
    """``{"ja_JP": {(context, msgid): text}}`` for ``bpy.app.translations.register``."""
    operator_context = bpy.app.translations.contexts.operator_default
    ja = {("*", english): japanese for english, japanese in MESSAGES.items()}
    for cls in _operator_classes():
        label = getattr(cls, "bl_label", "")
        if normalise(label) in MESSAGES:
            ja[(operator_context, label)] = MESSAGES[normalise(label)]
        description = getattr(cls, "bl_description", None) or cls.__doc__ or ""
        if normalise(description) in MESSAGES:
            ja[("*", description)] = MESSAGES[normalise(description)]
    return {LOCALE: ja}


_state = {"dictionary": None}


def registered_dictionary():
    """The dictionary registered now (``None`` while the add-on is not registered)."""
    return _state["dictionary"]


def register():
    dictionary = build_dictionary()
    bpy.app.translations.register(__package__, dictionary)
    _state["dictionary"] = dictionary


def unregister():
    bpy.app.translations.unregister(__package__)
    _state["dictionary"] = None
