/* For the acceptance gate: owns a broker through the C ABI until stdin closes.
 * Usage: gate_broker <agent-dir>. Prints the socket path, then "ready". */
#include <stdio.h>
#include <string.h>

#include "agent_intercom.h"

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: gate_broker <agent-dir>\n");
        return 2;
    }
    const char *settings = "idle_exit_ms=0\nlog_level=debug\n";
    aic_broker *broker = NULL;
    aic_error *err = NULL;
    if (aic_broker_start(argv[1], strlen(argv[1]), settings, strlen(settings), &broker, &err) != AIC_STATUS_OK) {
        fprintf(stderr, "gate_broker: %s: %s\n", aic_status_name(aic_error_code(err)), aic_error_message(err));
        aic_error_free(err);
        return 1;
    }
    printf("%s\nready\n", aic_broker_socket_path(broker));
    fflush(stdout);
    while (getchar() != EOF) {
    }
    int status = aic_broker_stop(broker, NULL) == AIC_STATUS_OK ? 0 : 1;
    aic_broker_free(broker);
    return status;
}
