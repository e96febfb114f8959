// Background jobs started with the server (sweepers and the like); each capability registers its own here.
import type { FastifyBaseLogger } from 'fastify';
import type { Services } from './services.js';
import { sweepSpendReservations } from './billing/sweeper.js';
import { fileSweeperJob } from './files/sweeper.js';
import { requestLogSweeperJob } from './request-logs/sweeper.js';

export type Job = (services: Services, log: FastifyBaseLogger) => Promise<void> | void;

const jobs: Job[] = [sweepSpendReservations, fileSweeperJob, requestLogSweeperJob];

export async function startBackgroundJobs(services: Services, log: FastifyBaseLogger): Promise<void> {
  for (const job of jobs) await job(services, log);
}
