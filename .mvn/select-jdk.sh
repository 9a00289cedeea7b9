# Sourced by ./mvnw: the project targets Java 21, so when JAVA_HOME (or the java on PATH) is older,
# pick the newest JDK >= 21 found in the usual install locations and export it as JAVA_HOME.
pallas_java_major() {
  "$1" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p'
}
pallas_current_java=
if [ -n "${JAVA_HOME-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then
  pallas_current_java="$JAVA_HOME/bin/java"
elif command -v java >/dev/null 2>&1; then
  pallas_current_java=$(command -v java)
fi
pallas_major=0
[ -z "$pallas_current_java" ] || pallas_major=$(pallas_java_major "$pallas_current_java")
if [ "${pallas_major:-0}" -lt 21 ]; then
  pallas_best= pallas_best_major=0
  set +f # mvnw runs with globbing off
  for pallas_jdk in /usr/lib/jvm/* /opt/java/* /opt/jdk* "$HOME"/.sdkman/candidates/java/*; do
    [ -x "$pallas_jdk/bin/javac" ] || continue
    pallas_m=$(pallas_java_major "$pallas_jdk/bin/java")
    if [ "${pallas_m:-0}" -ge 21 ] && [ "$pallas_m" -gt "$pallas_best_major" ]; then
      pallas_best=$pallas_jdk pallas_best_major=$pallas_m
    fi
  done
  set -f
  if [ -z "$pallas_best" ]; then
    echo "mvnw: this project needs a JDK >= 21; found Java ${pallas_major:-none}. Set JAVA_HOME." >&2
    exit 1
  fi
  JAVA_HOME=$pallas_best
  export JAVA_HOME
fi
# Maven's own Guice calls sun.misc.Unsafe; JDK 24+ warns on every run unless told otherwise.
if [ -n "${JAVA_HOME-}" ] && [ "$(pallas_java_major "$JAVA_HOME/bin/java")" -ge 24 ] 2>/dev/null; then
  case "${MAVEN_OPTS-}" in *sun-misc-unsafe*) ;; *) MAVEN_OPTS="${MAVEN_OPTS-} --sun-misc-unsafe-memory-access=allow"; export MAVEN_OPTS ;; esac
fi
