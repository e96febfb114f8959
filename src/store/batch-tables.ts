// Table types of the batches (migrations 021, 026, 028), kept beside schema.ts so that file stays readable.

/** Where a relayed batch is (migration 026): nothing sent, the create sent, the vendor batch polled, its cancel relayed. */
export type VendorStep = 'submit' | 'creating' | 'polling' | 'cancelling';

export type BatchStatus = 'validating' | 'in_progress' | 'finalizing' | 'completed' | 'failed' | 'expired' | 'cancelling' | 'cancelled';

/** A batch the gateway runs (migration 021): its lines in batch_lines, its worst case held as one charge until it ends. */
export interface BatchesTable {
  id: string;
  workspace_id: string;
  key_id: string;
  object: string;
  endpoint: string;
  input_file_id: string | null;
  completion_window: string;
  status: BatchStatus;
  charge: string;
  metadata: string | null;
  output_file_id: string | null;
  error_file_id: string | null;
  total: number;
  succeeded: number;
  failed: number;
  cost_micros: number;
  created_at: number;
  in_progress_at: number | null;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  expires_at: number;
  next_run_at: number;
  lease_owner: string | null;
  lease_until: number;
  /** The channel whose vendor batch API runs the lines (migration 026); null: the gateway runs them. */
  vendor_channel: string | null;
  vendor_step: VendorStep | null;
  vendor_batch_id: string | null;
  vendor_since: number | null;
  vendor_error: string | null;
}

export type BatchLineStatus = 'pending' | 'succeeded' | 'failed';

/** One input line of a batch and, once it ran, its result (migration 021). */
export interface BatchLinesTable {
  batch_id: string;
  line: number;
  custom_id: string;
  body: string;
  status: BatchLineStatus;
  attempts: number;
  next_at: number;
  result: string | null;
  cost_micros: number;
}
