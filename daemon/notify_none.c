/* Notifications without a service manager library: none (see notify.h). */
#include "config.h"

#include "daemon/notify.h"

void hrd_notify_ready(const char *status)
{
    (void)status;
}

void hrd_notify_stopping(void)
{
}
