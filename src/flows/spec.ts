// What a catalogue entry's `pipeline` section declares (schemas/catalogue.schema.json).
import type { EndpointConfig } from '../config/types.js';

export type PipelineSpec = NonNullable<EndpointConfig['pipeline']>;
