package dev.idem.benchmarks;

import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.Collection;
import java.util.concurrent.atomic.LongAdder;

/** The OpenTelemetry SDK as an application sets it up, every span sampled and batched, exported to nothing. */
final class Tracers {

    private Tracers() {
    }

    static OpenTelemetrySdk exportingNowhere() {
        return OpenTelemetrySdk.builder().setTracerProvider(SdkTracerProvider.builder()
                .addSpanProcessor(BatchSpanProcessor.builder(new Nowhere()).build()).build()).build();
    }

    /** Takes every span and drops it, counting them. */
    static final class Nowhere implements SpanExporter {

        static final LongAdder EXPORTED = new LongAdder();

        @Override
        public CompletableResultCode export(Collection<SpanData> spans) {
            EXPORTED.add(spans.size());
            return CompletableResultCode.ofSuccess();
        }

        @Override
        public CompletableResultCode flush() {
            return CompletableResultCode.ofSuccess();
        }

        @Override
        public CompletableResultCode shutdown() {
            return CompletableResultCode.ofSuccess();
        }
    }
}
