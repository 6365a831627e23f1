package dev.idem.cli.commands;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

class TableTest {

    @Test
    void aStreamedTablePrintsEachRowAtOnceInTheColumnsTheWholeTableWouldHave() {
        StringWriter whole = new StringWriter();
        new Table("ENTRY", "KEY", "OUTCOME", "DETAIL").row("0:0", "order-41", "sent", "orders-0@3")
                .row("0:12", "order-7", "refused", "already replayed").print(new PrintWriter(whole, true));

        StringWriter streamed = new StringWriter();
        PrintWriter out = new PrintWriter(streamed, true);
        Table table = new Table("ENTRY", "KEY", "OUTCOME", "DETAIL").expect("0:0", "order-41", "refused", "")
                .expect("0:12", "order-7", "refused", "");
        table.printHeader(out);
        table.printRow(out, "0:0", "order-41", "sent", "orders-0@3");
        String afterFirst = streamed.toString();
        table.printRow(out, "0:12", "order-7", "refused", "already replayed");

        assertThat(afterFirst).as("printed before the run ends").contains("order-41  sent     orders-0@3");
        assertThat(streamed.toString()).isEqualTo(whole.toString());
    }
}
