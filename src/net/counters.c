// SPDX-License-Identifier: MIT
#include "counters.h"

const char *const net_counter_names[] = {
#define NET_COUNTER_NAME(name, desc) #name,
    NET_COUNTERS(NET_COUNTER_NAME)
#undef NET_COUNTER_NAME
};

const char *const net_counter_descs[] = {
#define NET_COUNTER_DESC(name, desc) desc,
    NET_COUNTERS(NET_COUNTER_DESC)
#undef NET_COUNTER_DESC
};

const unsigned net_counter_count = sizeof(net_counter_names) / sizeof(net_counter_names[0]);
