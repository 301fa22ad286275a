# src/metrics: counters and gauges, Prometheus text, the per-process stats segment.
libtentcore_la_SOURCES += \
	src/metrics/metric.h \
	src/metrics/metric_names.h src/metrics/metric_names.cpp \
	src/metrics/snapshot.h src/metrics/snapshot.cpp \
	src/metrics/registry.h src/metrics/registry.cpp \
	src/metrics/prometheus_text.h src/metrics/prometheus_text.cpp \
	src/metrics/tent_metrics.h src/metrics/tent_metrics.cpp \
	src/metrics/byte_codec.h \
	src/metrics/process_stats.h src/metrics/process_stats.cpp \
	src/metrics/stats_codec.h src/metrics/stats_codec.cpp \
	src/metrics/stats_segment.h src/metrics/stats_segment.cpp \
	src/metrics/stats_publisher.h src/metrics/stats_publisher.cpp
