-- Idem's effect ledger (MySQL 8 and MariaDB, InnoDB). One row per applied effect, written in the
-- handler's own transaction. Keys compare byte for byte (utf8mb4_bin): 'ABC' and 'abc', or 'José'
-- and 'Jose', are different effects. Topic names are ASCII on both brokers (Kafka allows up to 249
-- characters); the primary key stays within InnoDB's 3072-byte limit:
-- 191 x 4 (group) + 249 x 1 (topic) + 512 x 4 (key) = 3061 bytes. applied_at is a datetime:
-- MySQL's timestamp type ends in January 2038.
create table if not exists {table} (
    consumer_group  varchar(191) character set utf8mb4 collate utf8mb4_bin not null,
    topic           varchar(249) character set ascii collate ascii_bin not null,
    idempotency_key varchar(512) character set utf8mb4 collate utf8mb4_bin not null,
    fence           bigint       not null,
    applied_at      datetime(3)  not null,
    outcome         varchar(8)   character set ascii not null default 'applied',
    primary key (consumer_group, topic, idempotency_key),
    index {index} (applied_at)
) engine = InnoDB default charset = utf8mb4 collate utf8mb4_bin;
