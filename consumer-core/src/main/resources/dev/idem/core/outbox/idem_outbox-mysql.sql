-- Idem's outbox (MySQL 8 and MariaDB 10.6+, InnoDB). One row per message sent, written in the
-- sender's own transaction; the relay publishes committed rows in position order per partition and
-- deletes them, or marks them sent. Columns as Debezium's Outbox Event Router reads them.
create table if not exists {table} (
    position     bigint       not null auto_increment primary key,
    id           varchar(255) character set ascii collate ascii_bin not null,
    destination  varchar(249) character set ascii collate ascii_bin not null,
    message_key  varchar(512) character set utf8mb4 collate utf8mb4_bin,
    payload      longblob,
    headers      text character set utf8mb4,
    traceparent  varchar(55)  character set ascii,
    partition_no smallint     not null,
    created_at   datetime(3)  not null,
    state        varchar(4)   character set ascii not null default 'new',
    attempts     integer      not null default 0,
    last_error   varchar(1000) character set utf8mb4,
    sent_at      datetime(3),
    unique index {prefix}_id (id),
    index {prefix}_unsent (state, partition_no, position),
    index {prefix}_next (state, position)
) engine = InnoDB default charset = utf8mb4 collate utf8mb4_bin;
create table if not exists {table}_relay (
    partition_no smallint not null primary key,
    served_at    datetime(3)
) engine = InnoDB;
insert ignore into {table}_relay (partition_no) values (0), (1), (2), (3), (4), (5), (6), (7), (8), (9), (10),
    (11), (12), (13), (14), (15);
