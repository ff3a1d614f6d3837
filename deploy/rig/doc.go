// Package rig drives deploy/rig/rig.sh: three switchyard replicas in
// network namespaces of their own behind HAProxy with
// deploy/routing/haproxy.cfg, and a load of four paced clients over six
// models, one of which gets half the requests. TestRig measures the model
// loads per replica with and without affinity, and the failed requests
// when a replica is killed and during a rolling restart (README.md). It is
// a Go module of its own, with no dependencies, so that switchyard's
// module and its import-direction check do not see it.
package rig
