/* Notifications through libsystemd's sd_notify (see notify.h). */
#include "config.h"

#include "daemon/notify.h"

#include <stdio.h>
#include <systemd/sd-daemon.h>

void hrd_notify_ready(const char *status)
{
    sd_notifyf(0, "READY=1\nSTATUS=%s", status);
}

void hrd_notify_stopping(void)
{
    sd_notify(0, "STOPPING=1\nSTATUS=writing state");
}
