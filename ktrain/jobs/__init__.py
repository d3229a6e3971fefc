"""Job logic, pure: what a job's objects say (`ktrain.jobs.state`), why it is not running
(`ktrain.jobs.why`), what `job get` and `job why` print as data, how logs are picked, the create and
rollback plan, and the diff's normalisation. No client, clock or printing: `ktrain.cluster` reads and
writes, `ktrain.service` composes the two."""
