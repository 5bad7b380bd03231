await import('./serve-service.ts');
