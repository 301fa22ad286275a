// The interposer's configuration: read (tent.conf, TENT_* environment) the
// first time the application opens a device, never at load time, so that a
// program that does not use verbs runs exactly as without tent.
#pragma once

namespace tent::interpose {

// Loads the configuration once and applies its logging knobs; an invalid
// configuration is logged once, the defaults stay in force for the
// interposer's own settings, and tent's engine is not started (the engine
// refuses an invalid configuration as a whole, tent.conf(5)).
void ensure_configured();

// Whether the configuration loaded without error.
bool configuration_valid();

// interpose_discovery_ms (tent.conf(5)).
int discovery_timeout_ms();

// connect_timeout_ms (tent.conf(5)): how long a tent connect may block.
int connect_timeout_ms();

// interpose_rendezvous_port (tent.conf(5)); 0: peers on this host only.
int rendezvous_port();

// interpose_ordering (tent.conf(5)).
bool ordering();

// Whether control_address is auto (the engine picks its address).
bool control_address_is_auto();

} // namespace tent::interpose
