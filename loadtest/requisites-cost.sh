#!/usr/bin/env bash
# What -requisites costs on a real site: Debian's python3-doc served by nginx
# on 127.0.0.1:18089 (apt-get install nginx python3-doc), crawled whole once
# without and once with -requisites. Prints the requests and body bytes nginx
# served and the WARC and CDXJ bytes written. docs/warc.md quotes a run.
set -euo pipefail
cd "$(dirname "$0")/.."
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
go build -o "$W/crawler" ./cmd/crawler
for mode in off on; do
	ng=$W/$mode/ng
	mkdir -p "$ng"/{client_body,proxy,fastcgi,uwsgi,scgi}
	cat >"$ng/nginx.conf" <<CONF
daemon off; master_process off; worker_processes 1; pid $ng/nginx.pid;
error_log $ng/error.log warn;
events { worker_connections 256; }
http {
  include /etc/nginx/mime.types; default_type application/octet-stream;
  log_format m '\$request_uri \$status \$body_bytes_sent';
  access_log $ng/access.log m;
  client_body_temp_path $ng/client_body; proxy_temp_path $ng/proxy;
  fastcgi_temp_path $ng/fastcgi; uwsgi_temp_path $ng/uwsgi; scgi_temp_path $ng/scgi;
  server { listen 127.0.0.1:18089; root /usr/share/doc/python3/html; gzip_static on; gunzip on; }
}
CONF
	/usr/sbin/nginx -p "$ng/" -e "$ng/error.log" -c "$ng/nginx.conf" &
	pid=$!
	sleep 1
	flag=()
	[ "$mode" = on ] && flag=(-requisites)
	start=$(date +%s.%N)
	"$W/crawler" -data "$W/$mode/data" -allow-private-networks -exit-when-idle -scope host \
		-default-delay 10ms -min-delay 10ms -progress 0 "${flag[@]}" http://127.0.0.1:18089/index.html 2>"$W/$mode/crawler.log"
	end=$(date +%s.%N)
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	awk -v m="$mode" -v s="$(echo "$end - $start" | bc)" '{n++; b+=$3} END {printf "-requisites %s: %d requests, %d body bytes, %.1f s\n", m, n, b, s}' "$ng/access.log"
	echo "-requisites $mode: WARC $(cat "$W/$mode"/data/warc/*.warc.gz | wc -c) bytes, CDXJ $(cat "$W/$mode"/data/warc/*.cdxj | wc -c) bytes"
done
