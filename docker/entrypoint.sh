#!/bin/sh
# switchyard's container entrypoint.
#
# It turns the SageMaker hosting convention, "docker run IMAGE serve", into
# "switchyard serve" with the settings a SageMaker endpoint needs, and passes
# every other command through:
#
#   serve [FLAGS]     start the server; FLAGS go to "switchyard serve"
#   (no arguments)    the same as "serve"
#   -FLAG ...         the same as "serve -FLAG ..."
#   models, describe, register, scale, unregister, invoke ...
#                     run that switchyard client subcommand
#   anything else     run it as it is (switchyard models, bash, python3 ...)
#
# Settings are handed over as SERVING_<KEY> variables, and only for keys that
# neither the environment nor the config file already sets: a value the user
# chose always wins. The config file is $SWITCHYARD_CONFIG, or the --config
# given after "serve". docker/README.md lists the defaults.
#
# The script ends with exec, so the server replaces it and receives the
# signals sent to the container (tini, PID 1 in the images, forwards them).
set -eu

# Where SageMaker mounts its folders; tests move it.
ml_root=${SWITCHYARD_SAGEMAKER_ROOT:-/opt/ml}

log() { printf 'switchyard-entrypoint: %s\n' "$*" >&2; }

# die reports a configuration error and exits with switchyard's usage code.
die() {
	log "error: $*"
	exit 2
}

main() {
	if [ "$#" -eq 0 ]; then
		set -- serve
	fi
	case $1 in
	serve)
		shift
		serve "$@"
		;;
	-*) serve "$@" ;;
	models | describe | register | scale | unregister | invoke) exec switchyard "$@" ;;
	*) exec "$@" ;;
	esac
}

# serve sets the defaults the user left open, then becomes the server.
serve() {
	find_config "$@"
	listen_defaults
	model_defaults
	set_default python_executable /opt/switchyard/venv/bin/python
	set_default socket_dir /tmp
	cache_default
	if [ -n "${SWITCHYARD_CONFIG:-}" ]; then
		set -- --config "$SWITCHYARD_CONFIG" "$@"
	fi
	exec switchyard serve "$@"
}

# find_config sets cfg to the config file switchyard will read: the last
# --config among the serve flags, else $SWITCHYARD_CONFIG, else none.
find_config() {
	cfg=${SWITCHYARD_CONFIG:-}
	while [ "$#" -gt 0 ]; do
		case $1 in
		--config=* | -config=*) cfg=${1#*=} ;;
		--config | -config)
			if [ "$#" -ge 2 ]; then
				cfg=$2
				shift
			fi
			;;
		esac
		shift
	done
	if [ -n "$cfg" ] && [ ! -r "$cfg" ]; then
		die "config file $cfg is not readable"
	fi
}

# listen_defaults puts both APIs on one listener on all interfaces, at the
# port SageMaker assigns in SAGEMAKER_BIND_TO_PORT (8080 when it assigns none).
listen_defaults() {
	port=${SAGEMAKER_BIND_TO_PORT:-8080}
	check_port "$port"
	set_default inference_address "http://0.0.0.0:$port"
	set_default management_address "$(value_of inference_address)"
}

# check_port accepts decimal port numbers from 1 to 65535.
check_port() {
	case $1 in
	'' | *[!0-9]* | ??????*) die "SAGEMAKER_BIND_TO_PORT=$1 is not a port number" ;;
	esac
	if [ "$1" -lt 1 ] || [ "$1" -gt 65535 ]; then
		die "SAGEMAKER_BIND_TO_PORT=$1 is not a port number"
	fi
}

# model_defaults picks the model store and the models loaded at start from
# what is mounted under $ml_root:
#   SAGEMAKER_MULTI_MODEL=true   multi-model endpoint: store models/, load
#                                none (SageMaker loads them with POST /models)
#   models/ holds something      store models/, load every model folder in it
#   model/ is a model folder     load model/ as the one model, named "model"
#   model/ holds model folders   store model/, load every model folder in it
#   model/ holds something else  load model/ as one model (the server says
#                                why it cannot when it has no serving.properties)
#   nothing mounted              store models/, load none
model_defaults() {
	single=$ml_root/model
	multi=$ml_root/models
	if is_true "${SAGEMAKER_MULTI_MODEL:-}"; then
		use_models "$multi" NONE "multi-model endpoint, models are loaded through POST /models"
	elif has_entries "$multi"; then
		use_models "$multi" ALL "every model folder of $multi"
	elif has_entries "$single" && ! is_model_dir "$single" && has_model_subdir "$single"; then
		use_models "$single" ALL "every model folder of $single"
	elif has_entries "$single"; then
		use_models "$single" "$single" "single model $single"
	else
		use_models "$multi" NONE "no model under $ml_root; register models through POST /models"
	fi
}

# use_models STORE LOAD WHY sets model_store and load_models. A model store
# the user chose comes with its own load_models (the server's default, ALL,
# when none is set), so neither is touched then.
use_models() {
	if user_sets model_store; then
		log "model_store set by the user; model layout under $ml_root not used"
		return 0
	fi
	log "$3"
	set_default model_store "$1"
	set_default load_models "$2"
}

# cache_default moves the unpacked worker runtime and the models' pip
# installs to the temp folder when the home folder cannot hold them (an
# arbitrary --user without a home, a read-only root file system).
cache_default() {
	if [ -n "${SWITCHYARD_CACHE_DIR+x}" ]; then
		return 0
	fi
	home_cache=${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}
	if ! mkdir -p "$home_cache" 2>/dev/null || [ ! -w "$home_cache" ]; then
		export SWITCHYARD_CACHE_DIR="${TMPDIR:-/tmp}/switchyard-cache"
		log "$home_cache is not writable; caching in $SWITCHYARD_CACHE_DIR"
	fi
}

# set_default KEY VALUE exports SERVING_<KEY>=VALUE unless the user set KEY.
set_default() {
	if user_sets "$1"; then
		return 0
	fi
	export "$(env_name "$1")=$2"
}

# user_sets KEY tells whether the environment or the config file sets KEY.
# A variable set to the empty string counts as set, as it does for the server.
user_sets() {
	eval "[ -n \"\${$(env_name "$1")+x}\" ]" || in_config "$1"
}

# env_name KEY prints the SERVING_* variable that overrides KEY.
env_name() {
	printf 'SERVING_%s' "$1" | tr '[:lower:]' '[:upper:]'
}

# in_config KEY tells whether the config file has a line that sets KEY
# (key, then "=", ":" or white space, as in Java properties files).
in_config() {
	[ -n "$cfg" ] && grep -Eq "^[[:space:]]*$1([[:space:]]*[=:]|[[:space:]]|\$)" "$cfg"
}

# value_of KEY prints KEY's value as switchyard will see it: the variable,
# else the last line of the config file that sets it.
value_of() {
	if eval "[ -n \"\${$(env_name "$1")+x}\" ]"; then
		eval "printf '%s' \"\${$(env_name "$1")}\""
	elif in_config "$1"; then
		sed -n "s/^[[:space:]]*$1[[:space:]]*[=:[:space:]][[:space:]]*//p" "$cfg" |
			tail -n 1 | sed 's/[[:space:]]*$//'
	fi
}

# is_true accepts what SageMaker and its toolkits write: true, True, TRUE, 1.
is_true() {
	case $1 in
	[Tt][Rr][Uu][Ee] | 1) return 0 ;;
	esac
	return 1
}

# has_entries DIR tells whether DIR is a folder with something in it.
has_entries() {
	[ -d "$1" ] && [ -n "$(ls -A "$1" 2>/dev/null)" ]
}

# is_model_dir DIR tells whether DIR is a model folder, as the server
# decides: it has serving.properties or model.py.
is_model_dir() {
	[ -f "$1/serving.properties" ] || [ -f "$1/model.py" ]
}

# has_model_subdir DIR tells whether a folder in DIR is a model folder.
has_model_subdir() {
	for d in "$1"/*/; do
		if is_model_dir "${d%/}"; then
			return 0
		fi
	done
	return 1
}

main "$@"
