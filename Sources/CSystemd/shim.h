// libsystemd's journal, daemon and D-Bus (sd-bus) APIs (Debian libsystemd-dev). The variadic sd_journal_send and
// sd_notifyf are not callable from Swift; WeaveSystemd uses sd_journal_sendv and sd_notify.
#include <sys/uio.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
// Our CODE_FILE/CODE_LINE/CODE_FUNC come from swift-log, not from this header.
#define SD_JOURNAL_SUPPRESS_LOCATION 1
#include <systemd/sd-journal.h>
