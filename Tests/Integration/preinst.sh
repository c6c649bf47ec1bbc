#!/usr/bin/env bash
# The package's preinst (debian/weave-healthd.preinst, which Scripts/install runs too) against the
# accounts and directories it must refuse: the user weave-healthd with uid 0, a login user's uid,
# another account's uid, a login shell or root's primary group; the group weave with gid 0, a login
# user's gid or another group's gid; /run/weave/apps or /run/weave as a symbolic
# link; and what it must accept: none of them yet, or system ones. Accounts come from a stand-in
# getent on PATH; /run is a tmpfs in a mount namespace of its own (unshare -m), so the host's is
# never touched. Needs root.
# Usage: Tests/Integration/preinst.sh debian/weave-healthd.preinst
set -uo pipefail
source "$(dirname "$0")/lib.sh"
PREINST=$BIN

cat > "$WORK/getent" <<'GETENT'
#!/bin/sh
# getent DATABASE [KEY], from $FAKE_DIR/DATABASE: every entry, or KEY's (exit 2 when it is not
# there, as getent does).
[ $# -ge 2 ] || exec cat "$FAKE_DIR/$1"
grep "^$2:" "$FAKE_DIR/$1" || exit 2
GETENT
chmod +x "$WORK/getent"

# Runs the preinst with PASSWD and GROUP lines and LINK ("apps", "weave" or none) under /run;
# sets RC and ERR.
run() { # PASSWD GROUP LINK
    printf '%s\n' "$1" > "$WORK/passwd"
    printf '%s\n' "$2" > "$WORK/group"
    ERR=$(FAKE_DIR="$WORK" PATH="$WORK:$PATH" unshare -m sh -c '
        mount -t tmpfs tmpfs /run || exit 99
        case "$1" in
        apps) mkdir -p /run/weave && ln -s /etc /run/weave/apps ;;
        weave) ln -s /etc /run/weave ;;
        esac
        sh "$0" install' "$PREINST" "$3" 2>&1 >/dev/null)
    RC=$?
}

refused() { # DESCRIPTION WORDS PASSWD GROUP LINK
    run "$3" "$4" "$5"
    if [ "$RC" -eq 1 ] && [[ "$ERR" == *"$2"* ]]; then ok "refused: $1 ($ERR)"
    else not_ok "refused: $1" "exit $RC: $ERR"; fi
}
accepted() { # DESCRIPTION PASSWD GROUP LINK
    run "$2" "$3" "$4"
    if [ "$RC" -eq 0 ] && [ -z "$ERR" ]; then ok "accepted: $1"; else not_ok "accepted: $1" "exit $RC: $ERR"; fi
}

accepted "no user or group yet" "" "" none
accepted "the system user and group sysusers made" "weave-healthd:x:998:998::/nonexistent:/usr/sbin/nologin" "weave:x:997:" none
refused "the user weave-healthd with uid 0" "with uid 0: the daemon would run as root" "weave-healthd:x:0:0::/root:/bin/bash" "" none
refused "the user weave-healthd with a login user's uid" "with uid 1000, a login user's" "weave-healthd:x:1000:1000::/home/w:/bin/bash" "" none
refused "the group weave with gid 0" "gid 0 (root's group)" "" "weave:x:0:" none
refused "the group weave of a login user" "with gid 1001, a login user's group" "" "weave:x:1001:alice" none
# Round 5 (#64): ids another account has too, a login shell, root's primary group.
system_groups=$'root:x:0:\ndisk:x:6:\nshadow:x:42:'
refused "the group weave sharing gid 42 with shadow" "which the group shadow has too" "" $'weave:x:42:\n'"$system_groups" none
refused "the group weave sharing gid 6 with disk" "which the group disk has too" "" "$system_groups"$'\nweave:x:6:' none
refused "the user weave-healthd sharing uid 33 with www-data" "which www-data's account has too" \
    $'www-data:x:33:33::/var/www:/usr/sbin/nologin\nweave-healthd:x:33:998::/nonexistent:/usr/sbin/nologin' "" none
refused "the user weave-healthd with a login shell" "has the login shell /bin/bash" "weave-healthd:x:998:998::/nonexistent:/bin/bash" "" none
refused "the user weave-healthd whose primary group is 0" "root's group (gid 0) as its primary group" \
    "weave-healthd:x:998:0::/nonexistent:/usr/sbin/nologin" "" none
accepted "system accounts beside others of their own ids" $'root:x:0:0::/root:/bin/bash\nweave-healthd:x:998:998::/nonexistent:/usr/sbin/nologin' \
    "$system_groups"$'\nweave:x:997:' none
refused "/run/weave/apps a link to /etc" "/run/weave/apps is a symbolic link (to /etc)" "" "" apps
refused "/run/weave a link to /etc" "/run/weave is a symbolic link (to /etc)" "" "" weave
run "" "" none
if [ "$RC" -eq 0 ]; then
    FAKE_DIR="$WORK" PATH="$WORK:$PATH" sh "$PREINST" configure >/dev/null 2>&1 && ok "other actions (configure) pass" || not_ok "other actions pass"
fi

finish
