"""Scrapy peer of the load benchmark (issue 5, part 2(d)).

A plain Scrapy spider configured like our crawler, run by run.sh under
loadtest/cmd/synthweb. Written for Debian 12's python3-scrapy (2.8.0) and
runnable with `python3 -m scrapy runspider peer_spider.py -a seeds=FILE -s ...`.

Settings (see custom_settings; run.sh overrides USER_AGENT, DOWNLOAD_DELAY,
CLOSESPIDER_PAGECOUNT, CONCURRENT_REQUESTS and CLOSESPIDER_TIMEOUT with -s):

- ROBOTSTXT_OBEY: robots.txt is fetched through the downloader, in the
  host's slot, so it is delayed and serialized like any other request.
- CONCURRENT_REQUESTS_PER_DOMAIN = 1: Scrapy's download slot key is the URL's
  hostname without the port (scrapy/core/downloader/__init__.py,
  _get_slot_key), so every 127.0.X.Y of the synthetic web gets its own slot.
- DOWNLOAD_DELAY, RANDOMIZE_DOWNLOAD_DELAY = False: Scrapy measures the delay
  from the START of the previous request of the slot (slot.lastseen is set
  when a request is dispatched), not from the end of its response as our
  crawler and the synthweb audit do. The gap end->start is therefore
  DOWNLOAD_DELAY minus the previous response time.
- CONCURRENT_ITEMS = 1: see the comment in custom_settings.
- SCHEDULER_PRIORITY_QUEUE = DownloaderAwarePriorityQueue, as Scrapy's
  "Broad Crawls" guide recommends: with the default queue the global
  CONCURRENT_REQUESTS budget fills with requests waiting in a few hosts'
  delay queues.
"""

import scrapy
from scrapy.http import TextResponse


class PeerSpider(scrapy.Spider):
    name = "peer"
    custom_settings = {
        "ROBOTSTXT_OBEY": True,
        "CONCURRENT_REQUESTS": 256,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        "CONCURRENT_REQUESTS_PER_IP": 0,
        "DOWNLOAD_DELAY": 1.0,
        "RANDOMIZE_DOWNLOAD_DELAY": False,
        "AUTOTHROTTLE_ENABLED": False,
        "USER_AGENT": "scrapypeer",
        "CLOSESPIDER_PAGECOUNT": 100000,
        "CLOSESPIDER_TIMEOUT": 600,
        "DEPTH_LIMIT": 0,
        "HTTPCACHE_ENABLED": False,
        "LOG_LEVEL": "INFO",
        "TELNETCONSOLE_ENABLED": False,
        "SCHEDULER_PRIORITY_QUEUE": "scrapy.pqueues.DownloaderAwarePriorityQueue",
        "DOWNLOAD_TIMEOUT": 30,
        "RETRY_TIMES": 2,
        # Scrapy runs every callback's output through CONCURRENT_ITEMS
        # (default 100) cooperative tasks per response, even when it holds
        # only Requests; on 100 x 50 pages at 100 ms that tripled Scrapy
        # 2.8's CPU per page (5.6 ms -> 1.8 ms) and made it CPU-bound at
        # 160 pages/s instead of 490. This spider yields no items.
        "CONCURRENT_ITEMS": 1,
    }

    def __init__(self, seeds=None, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not seeds:
            raise ValueError("spider argument seeds=FILE is required")
        self.seeds_file = seeds
        self.pages = 0

    def start_requests(self):
        with open(self.seeds_file) as f:
            for line in f:
                url = line.strip()
                if url and not url.startswith("#"):
                    yield scrapy.Request(url, callback=self.parse)

    def parse(self, response):
        self.pages += 1
        if not isinstance(response, TextResponse):
            return
        for href in response.css("a::attr(href)").getall():
            url = response.urljoin(href.strip())
            if url.startswith("http://") or url.startswith("https://"):
                yield scrapy.Request(url, callback=self.parse)

    def closed(self, reason):
        stats = self.crawler.stats
        start = stats.get_value("start_time")
        finish = stats.get_value("finish_time")
        elapsed = (finish - start).total_seconds() if start and finish else 0.0
        rate = self.pages / elapsed if elapsed else 0.0
        print(
            f"scrapy-peer: pages={self.pages} "
            f"responses={stats.get_value('downloader/response_count', 0)} "
            f"requests={stats.get_value('downloader/request_count', 0)} "
            f"reason={reason} elapsed={elapsed:.3f}s pages_per_s={rate:.1f}",
            flush=True,
        )
